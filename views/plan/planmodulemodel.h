#pragma once

#include <QAbstractTableModel>
#include <memory>

namespace spark {

struct QuantPlan;

/// @brief The plan's modules: checkpoint and vLLM names, role, decision (a checkbox on Linears), the
/// reason, and bytes before and after. Rows are tinted by decision. Toggling a checkbox asks for the
/// flip through toggleRequested(); the plan, not the model, decides what changes.
class PlanModuleModel : public QAbstractTableModel
{
    Q_OBJECT

  public:
    enum Column : int { Module, VllmName, Role, Decision, Reason, Bytes, BytesAfter, ColumnCount };
    enum ItemRole : int {
        ModuleNameRole = Qt::UserRole + 1, ///< checkpoint module name
        SortRole,                          ///< numbers as numbers
    };

    explicit PlanModuleModel(QObject* parent = nullptr);

    /// @brief Shows @p plan (null: nothing). Keeps rows in place when the module list is unchanged.
    void resetData(std::shared_ptr<const QuantPlan> plan);
    /// @brief The row of module @p name, or -1.
    int rowOf(const QString& name) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

  Q_SIGNALS:
    /// The user ticked or unticked the decision of Linear module @p module.
    void toggleRequested(const QString& module);

  private:
    std::shared_ptr<const QuantPlan> m_plan;
};

} // namespace spark
