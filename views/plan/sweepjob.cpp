#include "views/plan/sweepjob.h"

namespace spark {

SweepJob::SweepJob(QObject* parent)
    : QObject(parent), m_job(
                           this, [this](double fraction) { Q_EMIT progressChanged(fraction); },
                           [this](const SweepJobResult& result) { Q_EMIT finished(result); })
{
}

void SweepJob::start(std::shared_ptr<const Checkpoint> checkpoint, const SweepOptions& options)
{
    m_job.start([checkpoint = std::move(checkpoint), options](const ProgressFn& progress) {
        SweepJobResult result;
        result.sweep = std::make_shared<const SweepResult>(sweepCheckpoint(*checkpoint, options, progress));
        return result;
    });
}

void SweepJob::cancel()
{
    m_job.cancel();
}

} // namespace spark
