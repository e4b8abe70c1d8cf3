#include "views/plan/sweepjob.h"

#include "core/io/ioerror.h"
#include "views/shared/workerresult.h"

#include <QFutureWatcher>
#include <QPromise>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>

namespace spark {
namespace {

// QFuture progress is an int: report in units of 1/kProgressScale of the bytes.
constexpr int kProgressScale = 10000;

} // namespace

SweepJob::SweepJob(QObject* parent) : QObject(parent) {}

SweepJob::~SweepJob()
{
    m_future.cancel();
}

void SweepJob::start(std::shared_ptr<const Checkpoint> checkpoint, const SweepOptions& options)
{
    if (m_running) {
        cancel();
    }
    const quint64 job = m_jobs.startJob();
    m_running = true;
    auto* watcher = new QFutureWatcher<SweepJobResult>(this);
    connect(watcher, &QFutureWatcherBase::progressValueChanged, this, [this, job](int value) {
        if (m_jobs.isCurrent(job)) {
            Q_EMIT progressChanged(static_cast<double>(value) / kProgressScale);
        }
    });
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, job] {
        watcher->deleteLater();
        if (!m_jobs.isCurrent(job)) {
            return; // cancelled or superseded: already reported
        }
        m_running = false;
        Q_EMIT finished(watcher->future().resultCount() > 0 ? watcher->result() : SweepJobResult{});
    });
    m_future =
        QtConcurrent::run([checkpoint = std::move(checkpoint), options](QPromise<SweepJobResult>& promise) {
            promise.setProgressRange(0, kProgressScale);
            const ProgressFn progress = [&promise](std::uint64_t done, std::uint64_t total) {
                promise.setProgressValue(total ? static_cast<int>(static_cast<double>(done) /
                                                                  static_cast<double>(total) * kProgressScale)
                                               : kProgressScale);
                return !promise.isCanceled();
            };
            addResultOrError(promise, [&] {
                SweepJobResult result;
                result.sweep =
                    std::make_shared<const SweepResult>(sweepCheckpoint(*checkpoint, options, progress));
                return result;
            });
        });
    watcher->setFuture(m_future);
}

void SweepJob::cancel()
{
    if (!m_running) {
        return;
    }
    m_future.cancel();
    m_jobs.invalidate();
    m_running = false;
    Q_EMIT finished({});
}

} // namespace spark
