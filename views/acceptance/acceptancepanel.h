#pragma once

#include "core/forward/acceptancejob.h"
#include "core/forward/capturehealth.h"
#include "views/shared/backgroundjob.h"
#include "views/shared/jobprogressbar.h"

#include <QHash>
#include <QStringList>
#include <QWidget>
#include <memory>

class QButtonGroup;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QSpinBox;
class QTableView;

namespace spark {

class AcceptancePlot;
class AcceptancePositionModel;
class AcceptanceRunner;
class PlanController;
class SensitivityModel;
struct AcceptanceJobResult;

/// @brief The "Acceptance" tab: offline acceptance of the open draft on captured target hidden states
/// (core/forward, the CLI's `acceptance`). Inputs: the capture (file or hs_*.safetensors folder; typed,
/// browsed or dropped), an optional target checkpoint, k, anchors and seed; the quantized side is the Plan
/// tab's current plan applied in memory or a quantized checkpoint folder. Runs in the background with
/// progress and Cancel; shows per-position bars with 95% intervals, a table per position, τ of both drafts
/// with the paired change and, given drafter and cycle times, the predicted tok/s change (core's
/// predictAcceptanceSpeed(), as the CLI). The per-unit sensitivity ranks the plan's units by the τ they cost
/// and hands them to the Budget tab as α rules (alphaRulesRequested).
class AcceptancePanel : public QWidget
{
    Q_OBJECT

  public:
    explicit AcceptancePanel(PlanController* controller, QWidget* parent = nullptr);
    ~AcceptancePanel() override;

    QLineEdit* captureEdit() const { return m_capture; }
    QLineEdit* targetEdit() const { return m_target; }
    QLineEdit* quantizedEdit() const { return m_quantized; }
    QRadioButton* planRadio() const { return m_usePlan; }
    QRadioButton* checkpointRadio() const { return m_useCheckpoint; }
    QSpinBox* kSpin() const { return m_k; }
    QSpinBox* anchorsSpin() const { return m_anchors; }
    QSpinBox* seedSpin() const { return m_seed; }
    QCheckBox* bf16ActivationsBox() const { return m_bf16Activations; }
    QDoubleSpinBox* temperatureBox() const { return m_temperature; }
    QComboBox* draftSamplingBox() const { return m_drafting; }
    QCheckBox* numericsFloorBox() const { return m_numericsFloor; }
    QDoubleSpinBox* drafterMsSpin() const { return m_drafterMs; }
    QDoubleSpinBox* cycleMsSpin() const { return m_cycleMs; }
    QDoubleSpinBox* savingMsSpin() const { return m_savingMs; }
    QPushButton* runButton() const { return m_run; }
    QPushButton* cancelButton() const { return m_cancel; }
    JobProgressBar* progressBar() const { return m_progress; }
    QPushButton* sensitivityButton() const { return m_sensitivity; }
    QPushButton* useAlphaButton() const { return m_useAlpha; }
    QPushButton* exportRatesButton() const { return m_exportRates; }
    QPushButton* checkCaptureButton() const { return m_checkCapture; }
    AcceptanceRunner* runner() const { return m_runner; }
    AcceptancePositionModel* positionModel() const { return m_positions; }
    SensitivityModel* sensitivityModel() const { return m_units; }
    AcceptancePlot* plot() const { return m_plot; }
    /// @brief The last finished run, or null.
    std::shared_ptr<const AcceptanceRun> lastRun() const { return m_result; }
    /// @brief What the status line says (the error of a failed run names the file and field).
    QString statusText() const;
    QString tauText() const;
    QString speedText() const;

    /// @brief Sets the capture and target fields of the draft in @p draftFolder: now when it is open, else
    /// when it is opened (File ▸ Open Example names them before the draft has loaded).
    void setInputsForDraft(const QString& draftFolder, const QString& capture, const QString& target);

    /// @brief The job the inputs describe, or nullopt with @p why (nothing open, no capture, ...).
    std::optional<AcceptanceJob> jobFromInputs(QString* why) const;

  public Q_SLOTS:
    /// @brief Runs the paired acceptance in the background (a running job is cancelled first).
    void startRun();
    /// @brief Runs the per-unit sensitivity of the current plan in the background.
    void startSensitivity();
    void cancel();
    /// @brief True while a run, a sensitivity ranking, a capture check or a conversion runs.
    bool isRunning() const;
    /// @brief Reads the capture in the background and lists every defect of its hidden states in the status
    /// line (`capture check`), without running a draft.
    void checkCapture();
    /// @brief Emits alphaRulesRequested with the ranking's α rules.
    void useAsAlpha();
    /// @brief Writes the last run's per-position acceptance (the quantized draft's when one ran) for vLLM's
    /// synthetic rejection sampler to @p path; an empty path asks for one. False when nothing was written.
    bool exportRates(const QString& path = QString());

  Q_SIGNALS:
    /// A job started or ended (isRunning() says which).
    void runningChanged();
    /// The ranking's α rules ("re:^<unit>$=X") for the Budget tab; @p source says where they come from.
    void alphaRulesRequested(const QStringList& rules, const QString& source);
    void statusMessage(const QString& message);

  protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

  private:
    void onFinished(const AcceptanceJobResult& result);
    void setRunning(bool running);
    /// Cancel and runningChanged() follow the jobs now running.
    void jobsChanged();
    void setStatus(const QString& text, bool error);
    void updateSpeed();
    void clearResults();
    /// Keeps the capture and target fields of the draft being closed and shows those of @p folder (empty
    /// when it was never given any): a capture belongs to one target and its drafts, not to the next draft.
    void switchDraftInputs(const QString& folder);

    PlanController* m_controller;
    AcceptanceRunner* m_runner;
    QLineEdit* m_capture;
    QLineEdit* m_target;
    QString m_draftFolder; ///< canonical folder of the open draft, the key of m_inputsByDraft
    QLineEdit* m_layerIds;
    QSpinBox* m_promptTokens;
    struct DraftInputs
    {
        QString capture;
        QString target;
        QString layerIds;
        int promptTokens = -1;
    };
    QHash<QString, DraftInputs> m_inputsByDraft;
    QLineEdit* m_quantized;
    QRadioButton* m_usePlan;
    QRadioButton* m_useCheckpoint;
    QButtonGroup* m_quantGroup;
    QSpinBox* m_k;
    QSpinBox* m_anchors;
    QSpinBox* m_seed;
    QDoubleSpinBox* m_temperature;
    QComboBox* m_drafting;
    QCheckBox* m_bf16Activations;
    QCheckBox* m_numericsFloor;
    QPushButton* m_run;
    QPushButton* m_cancel;
    QPushButton* m_sensitivity;
    JobProgressBar* m_progress;
    QLabel* m_status;
    AcceptancePlot* m_plot;
    AcceptancePositionModel* m_positions;
    QTableView* m_positionTable;
    QLabel* m_tau;
    QDoubleSpinBox* m_drafterMs;
    QDoubleSpinBox* m_cycleMs;
    QDoubleSpinBox* m_savingMs;
    QLabel* m_speed;
    SensitivityModel* m_units;
    QTableView* m_unitTable;
    QPushButton* m_useAlpha;
    QPushButton* m_exportRates;
    QPushButton* m_checkCapture;
    QPushButton* m_convertCapture;
    /// The Layer ids and Prompt tokens fields, or nullopt with @p why.
    std::optional<CaptureReadOptions> captureReadOptions(QString* why) const;
    /// The capture of the Capture field as the open draft reads it (openCaptureFor()); throws like it.
    /// The capture and how to read it, with the open draft and target when there are (no plan, no run
    /// options): what Check Capture and Convert Capture need.
    std::optional<AcceptanceJob> captureJob(QString* why) const;
    std::function<HiddenStateCapture()> captureOpener(QString* why) const;
    void convertCapture();
    struct CaptureConversion
    {
        QString written;
        QString error;
    };
    BackgroundJob<CaptureConversion> m_conversion;
    /// What a capture check ends with: what the capture holds and its findings, or why it could not be read.
    struct CaptureCheck
    {
        std::optional<CaptureReview> review;
        QString error;
    };
    BackgroundJob<CaptureCheck> m_captureCheck;
    void onCaptureChecked(const CaptureCheck& result);
    std::shared_ptr<const AcceptanceRun> m_result;
    std::optional<AcceptanceJob> m_runningJob, m_resultJob; ///< the job started last; the one m_result is of
};

} // namespace spark
