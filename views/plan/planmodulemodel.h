#pragma once

#include "views/document/documentsnapshot.h"
#include "views/tensors/tensorrowresult.h"

#include <QAbstractTableModel>
#include <memory>
#include <optional>
#include <vector>

namespace spark {

struct QuantPlan;

/// @brief The plan's modules: checkpoint and vLLM names, role, decision (a checkbox on Linears), the rel.
/// error measured by the last analysis, the reason, and bytes before and after. Rows are tinted by decision.
/// Toggling a checkbox asks for the flip through toggleRequested(); the plan, not the model, decides what
/// changes.
class PlanModuleModel : public QAbstractTableModel
{
    Q_OBJECT

  public:
    enum Column : int { Module, VllmName, Role, Decision, RelError, Reason, Bytes, BytesAfter, ColumnCount };
    enum ItemRole : int {
        ModuleNameRole = Qt::UserRole + 1, ///< checkpoint module name
        SortRole,                          ///< numbers as numbers
    };

    explicit PlanModuleModel(QObject* parent = nullptr);

    /// @brief Shows @p plan (null: nothing). Keeps rows in place when the module list is unchanged.
    void resetData(std::shared_ptr<const QuantPlan> plan);
    /// @brief The analysis results of the open document (Document::analysis(), indexed like @p snapshot's
    /// rows): the Rel. error column shows each module's weight error, a fused set (q/k/v, gate/up) the
    /// error of the whole set, sqrt(Σ sqErr / Σ sqNorm) over its members, when every member has them.
    void setAnalysis(std::shared_ptr<const DocumentSnapshot> snapshot,
                     std::shared_ptr<const AnalysisTable> analysis);
    /// @brief The row of module @p name, or -1.
    int rowOf(const QString& name) const;
    /// @brief The rel. error shown for row @p row (the fused set's for a fused module), or none.
    std::optional<double> relError(int row) const;

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
    struct ModuleError
    {
        std::optional<double> relError;
        bool combined = false; ///< the error of the module's fused set
    };
    void recomputeErrors();
    const TensorRowResult* resultOf(const std::string& tensor) const;

    std::shared_ptr<const QuantPlan> m_plan;
    std::shared_ptr<const DocumentSnapshot> m_snapshot;
    std::shared_ptr<const AnalysisTable> m_analysis;
    std::vector<ModuleError> m_errors; ///< by row
};

} // namespace spark
