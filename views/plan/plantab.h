#pragma once

#include <QWidget>

class QComboBox;
class QLabel;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;

namespace spark {

struct ArchitectureInfo;

class ElidingLabel;
class LintModel;
class PlanController;
class PlanEntryEditor;
class PlanModuleModel;
class SummaryBar;

/// @brief The "Plan" tab: preset, default scheme and rounding, the user's target, ignore, scheme and rounding
/// entries with their live preview, the modules coloured by decision (with a checkbox per Linear), the lint
/// findings and the size/timing summary table. Everything shown comes from the PlanController's current plan.
///
/// Layout (docs/app.md, "How the tabs are laid out"): the modules are the centre, on the right over the
/// lint (a splitter in which the modules take any extra height and the lint keeps four rows); on the left
/// one rules editor (targets, ignore, scheme and rounding rules, a tab each) over the sizes and predictions,
/// with what blocks the export below them. At 1200×700 the modules show at least twelve rows.
class PlanTab : public QWidget
{
    Q_OBJECT

  public:
    explicit PlanTab(PlanController* controller, QWidget* parent = nullptr);

    /// @brief The rules editor: the targets, ignore, scheme and rounding rules behind its four tabs.
    PlanEntryEditor* rulesEditor() const { return m_rules; }
    QComboBox* defaultSchemeBox() const { return m_defaultScheme; }
    /// @brief The default rounding method (PlanOptions::rounding); item data is the method's name.
    QComboBox* roundingBox() const { return m_rounding; }
    PlanModuleModel* moduleModel() const { return m_modules; }
    QTableView* modulesView() const { return m_modulesView; }
    LintModel* lintModel() const { return m_lint; }
    QTableView* lintView() const { return m_lintView; }
    SummaryBar* summaryBar() const { return m_summary; }
    QComboBox* presetBox() const { return m_preset; }
    QSpinBox* targetLayersBox() const { return m_targetLayers; }
    /// @brief The error line ("export is blocked: …"), empty when the plan has no errors.
    QString errorText() const;
    /// @brief The `sparkulator-cli quantize` command that makes this plan (source folder, the export
    /// dialog's default output, every option that differs from the defaults); empty when nothing is open.
    QString quantizeCommandText() const;
    /// @brief Puts quantizeCommandText() on the clipboard.
    void copyQuantizeCommand();

    /// @brief Selects the rows of @p modules in the modules table. @return how many were found.
    int selectModules(const QStringList& modules);

  Q_SIGNALS:
    /// The user clicked a lint finding that concerns @p modules.
    void lintModulesActivated(const QStringList& modules);
    void statusMessage(const QString& message);

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    /// The Module column's least width: below it sibling names elide alike.
    static constexpr int kMinimumModuleWidth = 220;

    /// Widens the Module column to its longest name as far as the decision columns leave room, and the vLLM
    /// names' column to its longest.
    void fitModuleColumn();
    /// Names, in the preset box, the presets written for another architecture than @p arch's.
    void markPresetsOfOtherArchitectures(const ArchitectureInfo& arch);
    void onPlanChanged();
    void onEditsChanged();
    // The combo's tooltip: what the default rounding does, with the summary of the method chosen.
    void updateRoundingToolTip();
    void onSnapshotChanged();

    PlanController* m_controller;
    QComboBox* m_preset;
    ElidingLabel* m_presetDescription; ///< one line; the full text is its tooltip
    QLabel* m_targetLayersLabel;
    QSpinBox* m_targetLayers;
    PlanEntryEditor* m_rules;
    QComboBox* m_defaultScheme;
    QComboBox* m_rounding;
    PlanModuleModel* m_modules;
    QSortFilterProxyModel* m_modulesProxy;
    QTableView* m_modulesView;
    LintModel* m_lint;
    QTableView* m_lintView;
    QLabel* m_errors;
    QLabel* m_quantizedNote; ///< "already quantized: the findings are check's"
    QLabel* m_lintTitle;     ///< "Lint", or "Findings of check" on a quantized draft
    SummaryBar* m_summary;
};

} // namespace spark
