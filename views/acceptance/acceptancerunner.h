#pragma once

#include "core/forward/acceptancejob.h"
#include "views/shared/backgroundjob.h"

#include <QMetaType>
#include <QObject>
#include <QString>
#include <memory>
#include <vector>

namespace spark {

/// @brief What an acceptance job ends with: a paired run, a per-unit sensitivity ranking, or why there is
/// neither (an input error naming the file and field). All empty when the job was cancelled.
struct AcceptanceJobResult
{
    std::shared_ptr<const AcceptanceRun> run;
    std::shared_ptr<const std::vector<UnitSensitivity>> units;
    QString error;
};

/// @brief Runs core's runAcceptance() or runSensitivity() in the background (a BackgroundJob) with progress
/// and cancel. One job at a time: starting another cancels the running one, and the result of a cancelled or
/// superseded job is dropped when it arrives.
class AcceptanceRunner : public QObject
{
    Q_OBJECT

  public:
    enum class Kind { Acceptance, Sensitivity };

    explicit AcceptanceRunner(QObject* parent = nullptr);

    /// @brief Starts @p job as a paired run (Acceptance) or a per-unit ranking (Sensitivity; the job needs
    /// a plan). The job's progress callback is replaced by the runner's.
    void start(const AcceptanceJob& job, Kind kind);
    /// @brief Stops the running job; emits finished with an empty result at once.
    void cancel();
    bool isRunning() const { return m_job.isRunning(); }
    Kind kind() const { return m_kind; }

  Q_SIGNALS:
    /// @p fraction of the anchors (or units) done, 0..1.
    void progressChanged(double fraction);
    /// The job ended: a run, a ranking, an error, or nothing when cancelled.
    void finished(const spark::AcceptanceJobResult& result);

  private:
    BackgroundJob<AcceptanceJobResult> m_job;
    Kind m_kind = Kind::Acceptance;
};

} // namespace spark

Q_DECLARE_METATYPE(spark::AcceptanceJobResult)
