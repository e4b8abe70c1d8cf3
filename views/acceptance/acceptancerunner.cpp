#include "views/acceptance/acceptancerunner.h"

#include "core/io/ioerror.h"
#include "views/shared/workerresult.h"

#include <QFutureWatcher>
#include <QPromise>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>

namespace spark {
namespace {

// QFuture progress is an int: report in units of 1/kProgressScale of the work.
constexpr int kProgressScale = 10000;

AcceptanceJobResult runJob(AcceptanceJob job, AcceptanceRunner::Kind kind,
                           QPromise<AcceptanceJobResult>& promise)
{
    promise.setProgressRange(0, kProgressScale);
    job.options.progress = [&promise](std::uint64_t done, std::uint64_t total) {
        promise.setProgressValue(
            total ? static_cast<int>(static_cast<double>(done) / static_cast<double>(total) * kProgressScale)
                  : kProgressScale);
        return !promise.isCanceled();
    };
    AcceptanceJobResult result;
    if (kind == AcceptanceRunner::Kind::Acceptance) {
        result.run = std::make_shared<const AcceptanceRun>(runAcceptance(job));
    } else {
        result.units = std::make_shared<const std::vector<UnitSensitivity>>(runSensitivity(job));
    }
    return result;
}

} // namespace

AcceptanceRunner::AcceptanceRunner(QObject* parent) : QObject(parent) {}

AcceptanceRunner::~AcceptanceRunner()
{
    m_future.cancel();
}

void AcceptanceRunner::start(const AcceptanceJob& job, Kind kind)
{
    if (m_running) {
        cancel();
    }
    const quint64 id = m_jobs.startJob();
    m_kind = kind;
    m_running = true;
    auto* watcher = new QFutureWatcher<AcceptanceJobResult>(this);
    connect(watcher, &QFutureWatcherBase::progressValueChanged, this, [this, id](int value) {
        if (m_jobs.isCurrent(id)) {
            Q_EMIT progressChanged(static_cast<double>(value) / kProgressScale);
        }
    });
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, id] {
        watcher->deleteLater();
        if (!m_jobs.isCurrent(id)) {
            return; // cancelled or superseded: already reported
        }
        m_running = false;
        Q_EMIT finished(watcher->future().resultCount() > 0 ? watcher->result() : AcceptanceJobResult{});
    });
    m_future = QtConcurrent::run([job, kind](QPromise<AcceptanceJobResult>& promise) {
        // Every input problem becomes the panel's error text.
        addResultOrError(promise, [&] { return runJob(job, kind, promise); });
    });
    watcher->setFuture(m_future);
}

void AcceptanceRunner::cancel()
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
