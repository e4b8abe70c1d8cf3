#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

namespace spark {

struct CheckReport;
struct LintFinding;
struct QuantPlan;

/// @brief The plan's lint findings: severity (with its icon), the rule id and the message; the tooltip
/// explains the rule and cites where the fact comes from. For an already-quantized checkpoint it shows
/// `check`'s findings instead (setCheckReport()): the plan of a quantized draft means nothing. Rows sort by
/// severity (errors, then warnings, then info), in the findings' own order within one severity.
class LintModel : public QAbstractTableModel
{
    Q_OBJECT

  public:
    enum Column : int { Severity, Id, Modules, Message, ColumnCount };
    enum ItemRole : int {
        ModulesRole = Qt::UserRole + 1, ///< QStringList: the checkpoint modules (or entries) concerned
        SeverityRole,                   ///< int: LintSeverity
    };

    explicit LintModel(QObject* parent = nullptr);

    void resetData(std::shared_ptr<const QuantPlan> plan);
    /// @brief Shows @p report's findings instead of the plan's lint (null: the plan's lint again).
    void setCheckReport(std::shared_ptr<const CheckReport> report);
    /// @brief True while the rows are `check`'s findings.
    bool showsCheckFindings() const { return m_check != nullptr; }

    /// @brief One sentence on what lint (or `check`) rule @p id checks (tooltips), empty for an unknown id.
    static QString ruleDescription(const QString& id);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  private:
    const std::vector<LintFinding>* findings() const;
    /// The finding shown in row @p row.
    const LintFinding& findingAt(int row) const;
    void sortRows();

    std::shared_ptr<const QuantPlan> m_plan;
    std::shared_ptr<const CheckReport> m_check;
    std::vector<std::size_t> m_order; ///< row → index into findings()
};

} // namespace spark
