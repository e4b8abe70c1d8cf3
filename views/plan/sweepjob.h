#pragma once

#include "core/plan/sensitivitysweep.h"
#include "views/shared/backgroundjob.h"

#include <QMetaType>
#include <QObject>
#include <QString>
#include <memory>

namespace spark {

/// @brief What a sweep run ends with: the measured sweep, or why there is none.
struct SweepJobResult
{
    std::shared_ptr<const SweepResult> sweep;
    QString error;
};

/// @brief Runs core's sweepCheckpoint() in the background (a BackgroundJob) with progress and cancel; the
/// result of a run that was cancelled or superseded (another file) is dropped when it arrives.
class SweepJob : public QObject
{
    Q_OBJECT

  public:
    explicit SweepJob(QObject* parent = nullptr);

    /// @brief Starts sweeping @p checkpoint; a running sweep is cancelled first.
    void start(std::shared_ptr<const Checkpoint> checkpoint, const SweepOptions& options);
    /// @brief Stops the running sweep (emits finished with neither sweep nor error).
    void cancel();
    bool isRunning() const { return m_job.isRunning(); }

  Q_SIGNALS:
    /// @p fraction of the weight bytes measured (0..1).
    void progressChanged(double fraction);
    /// The run ended: a sweep, an error naming the file and tensor, or both empty when cancelled.
    void finished(const spark::SweepJobResult& result);

  private:
    BackgroundJob<SweepJobResult> m_job;
};

} // namespace spark

Q_DECLARE_METATYPE(spark::SweepJobResult)
