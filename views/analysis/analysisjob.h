#pragma once

#include "core/quant/analyzer.h"
#include "core/quant/errorstats.h"
#include "core/quant/quantbackend.h"
#include "core/quant/quantscheme.h"
#include "views/shared/jobtracker.h"

#include <QElapsedTimer>
#include <QFuture>
#include <QObject>
#include <QString>
#include <memory>
#include <optional>

namespace spark {

class Checkpoint;

/// @brief The quantization error of one tensor as analyze reports it: statistics, or why there are none
/// (a NaN/Inf weight, a read failure), naming the file.
struct TensorQuantResult
{
    QString tensor;
    const WeightScheme* scheme = nullptr;     ///< the scheme it was measured under
    const RoundingMethod* rounding = nullptr; ///< and the rounding method
    std::optional<TensorErrorStats> stats;
    QString error;
};

/// @brief Runs core's analyzeTensor() over every analyzable tensor of a checkpoint in the background
/// (QtConcurrent + QPromise) and streams one result per tensor as it completes, so the table fills in
/// while the rest is computed. Each run gets a job id: results of a run that was cancelled or superseded
/// (another scheme, another file) are dropped when they arrive.
class AnalysisJob : public QObject
{
    Q_OBJECT

  public:
    explicit AnalysisJob(QObject* parent = nullptr);
    /// Cancels a running job; the worker stops at its next progress report.
    ~AnalysisJob() override;

    /// @brief Starts analyzing @p checkpoint under @p options (its scheme and rounding, or the ones it names
    /// per tensor: a plan's) on @p backend (nullptr: the CPU); a running job is cancelled first. Each tensor
    /// is measured alone (an NVFP4 global scale of its own).
    /// @return the number of tensors the job will analyze.
    int start(std::shared_ptr<const Checkpoint> checkpoint, const AnalyzeOptions& options,
              std::shared_ptr<const QuantBackend> backend = nullptr);
    /// @brief Stops the running job (emits finished(true)); nothing more of it is reported.
    void cancel();
    bool isRunning() const { return m_running; }
    const WeightScheme& scheme() const { return *m_scheme; }

  Q_SIGNALS:
    void tensorAnalyzed(const spark::TensorQuantResult& result);
    /// @p fraction of the bytes done (0..1); @p msLeft estimated from the rate so far, -1 while unknown.
    void progressChanged(double fraction, qint64 msLeft);
    /// The job ended: all tensors done, or @p cancelled.
    void finished(bool cancelled);

  private:
    JobTracker m_jobs;
    QFuture<TensorQuantResult> m_future;
    QElapsedTimer m_clock;
    const WeightScheme* m_scheme = intSymmetricScheme(4, 128);
    bool m_running = false;
};

} // namespace spark
