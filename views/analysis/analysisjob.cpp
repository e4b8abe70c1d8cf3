#include "views/analysis/analysisjob.h"

#include "core/io/checkpoint.h"
#include "core/io/ioerror.h"
#include "core/quant/analyzer.h"
#include "core/quant/quanterror.h"

#include <QFutureWatcher>
#include <QPromise>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>

namespace spark {

namespace {

// QFuture progress is an int: report in units of 1/kProgressScale of the bytes.
constexpr int kProgressScale = 10000;

void analyzeAll(QPromise<TensorQuantResult>& promise, const Checkpoint& checkpoint, AnalyzeOptions options,
                const QuantBackend& backend)
{
    auto analyzable = [&](const CheckpointTensor& t) {
        return isAnalyzable(t.info, analyzedScheme(options, t.info.name));
    };
    std::uint64_t total = 0;
    for (const auto& t : checkpoint.tensors()) {
        total += analyzable(t) ? t.info.byteSize() : 0;
    }
    promise.setProgressRange(0, kProgressScale);
    options.backend = &backend;
    std::vector<std::byte> buffer;
    std::uint64_t done = 0;
    for (const auto& t : checkpoint.tensors()) {
        if (!analyzable(t)) {
            continue;
        }
        if (promise.isCanceled()) {
            return;
        }
        TensorQuantResult result;
        result.tensor = QString::fromStdString(t.info.name);
        result.scheme = &analyzedScheme(options, t.info.name);
        result.rounding = &analyzedRounding(options, t.info.name);
        const std::uint64_t base = done;
        const ProgressFn progress = [&promise, base, total](std::uint64_t bytes, std::uint64_t) {
            const double fraction =
                total ? static_cast<double>(base + bytes) / static_cast<double>(total) : 1.0;
            promise.setProgressValue(static_cast<int>(fraction * kProgressScale));
            return !promise.isCanceled();
        };
        try {
            result.stats = analyzeTensor(checkpoint.fileOf(t), t.info, options, buffer, progress);
        } catch (const IoError& e) {
            if (e.kind() == IoErrorKind::Cancelled) {
                return;
            }
            result.error = QString::fromStdString(e.what());
        } catch (const QuantError& e) {
            // NaN/Inf: the message names the tensor and the first bad index; add the file.
            result.error = QString::fromStdString(checkpoint.fileOf(t).path().string() + ": " + e.what());
        } catch (const std::exception& e) {
            result.error = QString::fromStdString(checkpoint.fileOf(t).path().string() + ": " + e.what());
        }
        done += t.info.byteSize();
        promise.addResult(std::move(result));
    }
    promise.setProgressValue(kProgressScale);
}

} // namespace

AnalysisJob::AnalysisJob(QObject* parent) : QObject(parent) {}

AnalysisJob::~AnalysisJob()
{
    // The worker owns a reference to the checkpoint and stops at its next progress report; the
    // watcher is our child and goes with us, so nothing reports into a destroyed object.
    m_future.cancel();
}

int AnalysisJob::start(std::shared_ptr<const Checkpoint> checkpoint, const AnalyzeOptions& options,
                       std::shared_ptr<const QuantBackend> backend)
{
    if (m_running) {
        cancel();
    }
    int count = 0;
    for (const auto& t : checkpoint->tensors()) {
        count += isAnalyzable(t.info, analyzedScheme(options, t.info.name)) ? 1 : 0;
    }
    const quint64 job = m_jobs.startJob();
    m_scheme = options.scheme;
    m_running = true;
    m_clock.start();
    auto* watcher = new QFutureWatcher<TensorQuantResult>(this);
    connect(watcher, &QFutureWatcherBase::resultReadyAt, this, [this, watcher, job](int index) {
        if (m_jobs.isCurrent(job)) {
            Q_EMIT tensorAnalyzed(watcher->resultAt(index));
        }
    });
    connect(watcher, &QFutureWatcherBase::progressValueChanged, this, [this, job](int value) {
        if (!m_jobs.isCurrent(job)) {
            return;
        }
        const double fraction = static_cast<double>(value) / kProgressScale;
        const qint64 elapsed = m_clock.elapsed();
        // Too early for a rate that means anything: say so rather than promise a number.
        const qint64 left =
            fraction > 0.02 && elapsed > 300
                ? static_cast<qint64>(static_cast<double>(elapsed) * (1.0 - fraction) / fraction)
                : -1;
        Q_EMIT progressChanged(fraction, left);
    });
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, job] {
        watcher->deleteLater();
        if (!m_jobs.isCurrent(job)) {
            return; // cancelled or superseded: already reported
        }
        m_running = false;
        Q_EMIT finished(false);
    });
    m_future = QtConcurrent::run([checkpoint = std::move(checkpoint), options,
                                  backend = std::move(backend)](QPromise<TensorQuantResult>& promise) {
        analyzeAll(promise, *checkpoint, options, backend ? *backend : cpuBackend());
    });
    watcher->setFuture(m_future);
    return count;
}

void AnalysisJob::cancel()
{
    if (!m_running) {
        return;
    }
    m_future.cancel();
    m_jobs.invalidate();
    m_running = false;
    Q_EMIT finished(true);
}

} // namespace spark
