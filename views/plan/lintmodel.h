#pragma once

#include <QAbstractTableModel>
#include <memory>

namespace spark {

struct QuantPlan;

/// @brief The plan's lint findings: severity (with its icon), the rule id and the message; the tooltip
/// explains the rule and cites where the fact comes from.
class LintModel : public QAbstractTableModel
{
    Q_OBJECT

  public:
    enum Column : int { Severity, Id, Message, ColumnCount };
    enum ItemRole : int {
        ModulesRole = Qt::UserRole + 1, ///< QStringList: the checkpoint modules (or entries) concerned
        SeverityRole,                   ///< int: LintSeverity
    };

    explicit LintModel(QObject* parent = nullptr);

    void resetData(std::shared_ptr<const QuantPlan> plan);

    /// @brief One sentence on what lint rule @p id checks (tooltips), empty for an unknown id.
    static QString ruleDescription(const QString& id);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  private:
    std::shared_ptr<const QuantPlan> m_plan;
};

} // namespace spark
