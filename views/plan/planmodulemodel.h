#pragma once

#include "views/document/documentsnapshot.h"
#include "views/tensors/tensorrowresult.h"

#include <QAbstractTableModel>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace spark {

struct RoundingMethod;
struct QuantPlan;
struct SweepResult;
struct WeightScheme;

/// @brief The plan's modules: checkpoint and vLLM names, role, decision (a checkbox on Linears), the rel.
/// error of the scheme each module is planned for, the reason, and bytes before and after. Rows are tinted
/// by decision.
///
/// The error of a quantized module is its planned scheme's: from the last analysis when the analysis ran
/// with that scheme, else from the Budget tab's sweep (which measures every legal scheme of every unit);
/// when neither measured it the cell says which scheme is not measured yet. A module kept BF16 shows what
/// the analysis scheme would cost it.
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
    /// @brief The scheme the analysis table was measured with (the toolbar's). Null: not known, the analysis
    /// is taken to measure every module's planned scheme.
    void setAnalysisScheme(const WeightScheme* scheme);
    /// @brief The Budget tab's sweep (null: none): the error of every legal scheme of every decision unit.
    void setSweep(std::shared_ptr<const SweepResult> sweep);
    /// @brief The scheme whose error row @p row shows; null when it shows none.
    const WeightScheme* errorScheme(int row) const;
    /// @brief The planned scheme of row @p row when neither the analysis nor the sweep measured it yet.
    const WeightScheme* unmeasuredScheme(int row) const;
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
    enum class ErrorSource { None, Analysis, Sweep };
    struct ModuleError
    {
        std::optional<double> relError;
        bool combined = false; ///< the error of the module's fused set
        ErrorSource source = ErrorSource::None;
        const WeightScheme* scheme = nullptr;     ///< the scheme relError belongs to (null: not known)
        const WeightScheme* unmeasured = nullptr; ///< the planned scheme, when nothing measured it yet
        bool operator==(const ModuleError&) const = default;
    };
    void recomputeErrors();
    void announceErrorChanges(const std::vector<ModuleError>& before);
    /// The sweep's error of @p scheme under @p rounding on the decision unit holding @p module (the whole
    /// fused set); none when the sweep did not measure that pair.
    std::optional<double> sweepError(const std::string& module, const WeightScheme* scheme,
                                     const RoundingMethod* rounding) const;
    const TensorRowResult* resultOf(const std::string& tensor) const;

    std::shared_ptr<const QuantPlan> m_plan;
    std::shared_ptr<const DocumentSnapshot> m_snapshot;
    std::shared_ptr<const AnalysisTable> m_analysis;
    const WeightScheme* m_analysisScheme = nullptr;
    std::shared_ptr<const SweepResult> m_sweep;
    std::vector<ModuleError> m_errors; ///< by row
    /// Modules a preset ignore entry keeps BF16, with that entry: their checkbox cannot change them (only
    /// another preset can), so it is drawn disabled.
    std::map<std::string, std::string> m_presetKept;
    void findPresetKept();
};

} // namespace spark
