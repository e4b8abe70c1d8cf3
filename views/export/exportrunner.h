#pragma once

#include "core/calibrate/capturecalibration.h"
#include "core/export/exporter.h"
#include "core/export/modelcardinputs.h"
#include "core/export/verifier.h"
#include "core/plan/quantplan.h"
#include "core/quant/quantbackend.h"
#include "views/shared/jobtracker.h"

#include <QObject>
#include <QString>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>

namespace spark {

class Checkpoint;

/// @brief What to export: the source, a copy of the plan (later edits do not reach a running job) and
/// the output options.
struct ExportRequest
{
    std::shared_ptr<const Checkpoint> source;
    QuantPlan plan;
    QString output;
    std::uint64_t maxShardBytes = 0; ///< 0: one model.safetensors
    unsigned threads = 0;            ///< 0: all cores
    CardOptions card;                ///< README.md of the output (renderModelCard(modelCardInputs(...)))
    bool verify = true;              ///< run verifyExport() on the output afterwards
    Backend backend = Backend::Cpu;  ///< where quantization and the verify recomputation run
    /// GPTQ and/or the hessian rounding's scales from a capture before the export (its progress and threads
    /// are the runner's).
    std::optional<CalibrationOptions> calibration;
};

/// @brief How an export ended.
struct ExportOutcome
{
    enum class Status { Succeeded, Cancelled, Failed };
    Status status = Status::Failed;
    QString output;
    /// One line naming the file and, where one is concerned, the tensor (Failed only).
    QString error;
    ExportResult result;
    std::optional<VerifyReport> verify; ///< set when verification ran
    QString calibrationSummary;         ///< CaptureCalibration::summary() when a calibration ran
    double seconds = 0;
};

/// @brief Runs exportCheckpoint() and then verifyExport() in a worker thread (QtConcurrent + QPromise),
/// reporting progress in two stages and cancelling through core's ProgressFn. Core guarantees that a
/// cancelled or failed export leaves neither the output nor its staging folder behind.
class ExportRunner : public QObject
{
    Q_OBJECT

  public:
    /// Progress is reported per mille of each stage: [0, 1000] exporting, [1000, 2000] verifying.
    static constexpr int kStageRange = 1000;

    explicit ExportRunner(QObject* parent = nullptr);
    ~ExportRunner() override;

    /// @brief Starts @p request. Refused (returns false) while another export runs.
    bool start(ExportRequest request);
    /// @brief Asks the running job to stop at its next progress report. Thread-safe.
    void cancel();
    bool isRunning() const { return m_running; }
    bool isCancelRequested() const { return m_cancel && m_cancel->load(); }

    /// @brief For tests: called in the worker thread on every progress report, after the progress is
    /// posted and before the cancel flag is read, so a test can hold the job mid-way until it cancels.
    void setWorkerHook(std::function<void(std::uint64_t done, std::uint64_t total)> hook);

  Q_SIGNALS:
    /// @p value in [0, 2 · kStageRange]; @p text says the stage and the bytes done.
    void progressChanged(int value, const QString& text);
    void finished(const spark::ExportOutcome& outcome);

  private:
    JobTracker m_jobs;
    bool m_running = false;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    std::function<void(std::uint64_t, std::uint64_t)> m_hook;
};

} // namespace spark
