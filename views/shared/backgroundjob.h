#pragma once

#include "core/progress.h"
#include "views/shared/jobtracker.h"
#include "views/shared/workerresult.h"

#include <QFutureWatcher>
#include <QObject>
#include <QPromise>
#include <QtConcurrent/QtConcurrentRun>
#include <functional>

namespace spark {

/// @brief One kind of background work of a view: run on the thread pool with progress and cancel, its result
/// (or error, a `QString error` member of @p Result) handed to the GUI thread. A run that was cancelled or
/// superseded by a newer one is dropped when it arrives. Owned by a widget (@p context), which outlives the
/// watchers it parents.
template <typename Result> class BackgroundJob
{
  public:
    /// The work: returns the result or throws (IoError Cancelled when @p progress says stop).
    using Work = std::function<Result(const ProgressFn& progress)>;

    BackgroundJob(QObject* context, std::function<void(double fraction)> onProgress,
                  std::function<void(const Result&)> onFinished)
        : m_context(context), m_onProgress(std::move(onProgress)), m_onFinished(std::move(onFinished))
    {
    }
    ~BackgroundJob() { m_future.cancel(); }
    BackgroundJob(const BackgroundJob&) = delete;
    BackgroundJob& operator=(const BackgroundJob&) = delete;

    /// @brief Starts @p work; a running one is cancelled first.
    void start(Work work)
    {
        cancel();
        const quint64 job = m_jobs.startJob();
        m_running = true;
        auto* watcher = new QFutureWatcher<Result>(m_context);
        QObject::connect(watcher, &QFutureWatcherBase::progressValueChanged, m_context,
                         [this, job](int value) {
                             if (m_jobs.isCurrent(job)) {
                                 m_onProgress(static_cast<double>(value) / kScale);
                             }
                         });
        QObject::connect(watcher, &QFutureWatcherBase::finished, m_context, [this, watcher, job] {
            watcher->deleteLater();
            if (!m_jobs.isCurrent(job)) {
                return; // cancelled or superseded: already reported
            }
            m_running = false;
            m_onFinished(watcher->future().resultCount() > 0 ? watcher->result() : Result{});
        });
        m_future = QtConcurrent::run([work = std::move(work)](QPromise<Result>& promise) {
            promise.setProgressRange(0, kScale);
            const ProgressFn progress = [&promise](std::uint64_t done, std::uint64_t total) {
                promise.setProgressValue(
                    total ? static_cast<int>(static_cast<double>(done) / static_cast<double>(total) * kScale)
                          : kScale);
                return !promise.isCanceled();
            };
            addResultOrError(promise, [&] { return work(progress); });
        });
        watcher->setFuture(m_future);
    }

    /// @brief Stops the running work (reports an empty result: neither value nor error).
    void cancel()
    {
        if (!m_running) {
            return;
        }
        m_future.cancel();
        m_jobs.invalidate();
        m_running = false;
        m_onFinished(Result{});
    }

    bool isRunning() const { return m_running; }

  private:
    // QFuture progress is an int: reported in units of 1/kScale.
    static constexpr int kScale = 10000;

    QObject* m_context;
    std::function<void(double)> m_onProgress;
    std::function<void(const Result&)> m_onFinished;
    JobTracker m_jobs;
    QFuture<Result> m_future;
    bool m_running = false;
};

} // namespace spark
