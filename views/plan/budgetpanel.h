#pragma once

#include "core/plan/budgetallocator.h"
#include "views/plan/acceptancescoring.h"
#include "views/plan/planedits.h"
#include "views/shared/backgroundjob.h"
#include "views/shared/jobprogressbar.h"

#include <QStringList>
#include <QWidget>
#include <functional>
#include <map>
#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSlider;
class QTableWidget;

namespace spark {

class FrontierPlot;
class PlanController;
class SweepJob;
struct SweepJobResult;

/// @brief The "Budget" tab: runs the sensitivity sweep of the open draft in the background (progress,
/// cancel), shows the exact Pareto frontier of the allocator with the presets and the current plan on it,
/// and applies the plan of a frontier point when the budget slider moves or a point is clicked. Applying
/// is one undoable plan edit (the plan's scheme rules at sweep time plus one rule per unit); a drag is one
/// undo step. The "what changed" table lists the modules whose scheme or rounding the last application
/// changed.
///
/// The frontier minimises weight error until the draft is scored by acceptance (the Acceptance tab's capture
/// and target): then every candidate of every unit is measured on the capture, the frontier minimises the
/// summed KL the choices cost the proposals, and Measure Plan reports the applied plan and the recipe on
/// held-out samples. The scores are kept, so moving the budget measures nothing again.
class BudgetPanel : public QWidget
{
    Q_OBJECT

  public:
    explicit BudgetPanel(PlanController* controller, QWidget* parent = nullptr);

    SweepJob* sweepJob() const { return m_job; }
    FrontierPlot* frontierPlot() const { return m_plot; }
    QSlider* budgetSlider() const { return m_slider; }
    QCheckBox* rolePriorsBox() const { return m_priors; }
    /// @brief Checked: the sweep also measures every candidate scheme under mse and range rounding, so the
    /// allocator chooses a rounding per unit too.
    QCheckBox* searchRoundingBox() const { return m_searchRounding; }
    QTableWidget* changesTable() const { return m_changes; }
    QPushButton* sweepButton() const { return m_sweepButton; }
    /// @brief The measured sweep, or null.
    std::shared_ptr<const SweepResult> sweep() const { return m_sweep; }
    /// @brief The allocator over the sweep with the current α, or null.
    const BudgetAllocator* allocator() const { return m_allocator.get(); }
    /// @brief The frontier point applied last, or -1.
    int appliedPoint() const { return m_applied; }
    QString summaryText() const;
    QPushButton* scoreButton() const { return m_scoreButton; }
    JobProgressBar* progressBar() const { return m_progress; }
    QPushButton* measureButton() const { return m_measureButton; }
    /// @brief The acceptance scores the frontier is built on, or null (weight error).
    const AcceptanceScores* scores() const { return m_scores ? &*m_scores : nullptr; }
    /// @brief The last held-out measurement of the applied plan and the recipe, or null.
    const PlanMeasurement* measurement() const { return m_measurement ? &*m_measurement : nullptr; }
    /// @brief Where scoring finds the capture, the target and k: nullopt with a reason when not set.
    using AcceptanceInputsSource = std::function<std::optional<AcceptanceObjectiveInputs>(QString* why)>;
    void setAcceptanceInputsSource(AcceptanceInputsSource source) { m_inputsSource = std::move(source); }
    /// @brief The α rules from elsewhere (setExternalAlphas()), empty when none.
    QStringList externalAlphas() const { return m_externalAlphas; }
    /// @brief Every α rule the allocator uses: the role priors when checked, then the external rules
    /// (later rules win, so a measured unit overrides its role's prior).
    std::vector<std::string> alphaRules() const;

  public Q_SLOTS:
    /// @brief Sweeps the open draft under the plan's current options.
    void startSweep();
    void cancelSweep();
    /// @brief True while a sweep, a scoring or a measurement runs.
    bool isRunning() const;
    /// @brief Sweeps the open draft and scores every candidate by acceptance on the capture the inputs
    /// source gives; the frontier then minimises the measured KL.
    void startScoring();
    /// @brief Measures the plan in use and the recipe on the held-out samples of the scored capture.
    void startMeasuring();
    /// @brief Applies frontier point @p index as an undoable plan edit.
    void applyPoint(int index);
    /// @brief Takes α rules "ENTRY=X" from elsewhere (the Acceptance tab's per-unit sensitivity) and rebuilds
    /// the frontier with them; @p source names them in the tab. Empty @p rules clears them; another draft
    /// clears them too (they name its units).
    void setExternalAlphas(const QStringList& rules, const QString& source);

  Q_SIGNALS:
    /// A job started or ended (isRunning() says which).
    void runningChanged();
    /// A sweep finished (or was dropped): TensorSweepSection and others follow it.
    void sweepChanged(std::shared_ptr<const spark::SweepResult> sweep);
    void statusMessage(const QString& message);

  private:
    /// The open draft when its plan can be swept or scored; otherwise null, and the status bar says why.
    std::shared_ptr<const Checkpoint> draftToMeasure();
    /// A background job ended: buttons back; the status bar says so when it failed or was cancelled
    /// (@p what: "Sweep"). True when there is a result to take.
    bool ended(const QString& error, bool hasResult, const QString& what);
    void onSweepFinished(const SweepJobResult& result);
    void onScoresFinished(const AcceptanceScores& result);
    void onMeasurementFinished(const PlanMeasurement& result);
    void setRunning(bool running);
    QString acceptanceText() const;
    /// The user's own edits: the current ones, without the rules of a budget point this tab applied when
    /// nothing changed since.
    PlanEdits userEdits() const;
    /// What the frontier's loss is: the objective at the chosen draft temperature, or KL.
    QString lossDescription() const;
    void rebuildAllocator();
    void onPlanChanged();
    void onSliderMoved(int value);
    void updateSummary();

    PlanController* m_controller;
    SweepJob* m_job;
    FrontierPlot* m_plot;
    QPushButton* m_sweepButton;
    QPushButton* m_scoreButton;
    QPushButton* m_measureButton;
    QPushButton* m_cancelButton;
    JobProgressBar* m_progress;
    QCheckBox* m_priors;
    QCheckBox* m_searchRounding;
    QLabel* m_alphaSource;
    QPushButton* m_clearAlphas;
    QStringList m_externalAlphas;
    QComboBox* m_axis;
    QSlider* m_slider;
    QLabel* m_summary;
    QTableWidget* m_changes;
    std::shared_ptr<const SweepResult> m_sweep;
    std::optional<AcceptanceScores> m_scores; ///< set: the frontier minimises the measured KL
    std::optional<PlanMeasurement> m_measurement;
    AcceptanceInputsSource m_inputsSource;
    BackgroundJob<AcceptanceScores> m_scoring;
    BackgroundJob<PlanMeasurement> m_measuring;
    std::unique_ptr<BudgetAllocator> m_allocator;
    PlanEdits m_baseEdits; ///< the edits the sweep was made for; applications add rules to these
    /// The edits the last applied budget point left, while they are the plan's: a new sweep, score or
    /// recipe then starts from m_baseEdits (an applied point is a plan, not a set of pins).
    std::optional<PlanEdits> m_appliedEdits;
    int m_applied = -1;
    int m_mergeSession = 0;
    /// Each module's scheme and rounding when the slider session m_changesSession began: what the "what
    /// changed" table compares with.
    std::map<std::string, std::pair<const WeightScheme*, const RoundingMethod*>> m_sessionStart;
    int m_changesSession = -1;
    bool m_settingSlider = false;
};

} // namespace spark
