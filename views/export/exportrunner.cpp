#include "views/export/exportrunner.h"

#include "core/bench/modelcard.h"
#include "core/io/checkpoint.h"
#include "core/io/ioerror.h"
#include "core/quant/quanterror.h"
#include "views/shared/formatting.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QPromise>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>

namespace spark {

namespace {

// A ProgressFn for one stage: posts the stage's per mille and a "<verb> 1.2 MiB of 3.4 MiB" text, runs
// the test hook, then reports whether to go on.
ProgressFn stageProgress(QPromise<ExportOutcome>& promise, int offset, const QString& verb,
                         const std::shared_ptr<std::atomic<bool>>& cancel,
                         const std::function<void(std::uint64_t, std::uint64_t)>& hook, bool bytes = true)
{
    return [&promise, offset, verb, cancel, hook, bytes](std::uint64_t done, std::uint64_t total) {
        const auto permille =
            total == 0
                ? ExportRunner::kStageRange
                : static_cast<int>(std::min<std::uint64_t>(done, total) * ExportRunner::kStageRange / total);
        promise.setProgressValueAndText(
            offset + permille,
            bytes ? ExportRunner::tr("%1 %2 of %3").arg(verb, localizedBytes(done), localizedBytes(total))
                  : ExportRunner::tr("%1: %2 of %n anchor(s)", nullptr, static_cast<int>(total))
                        .arg(verb)
                        .arg(done));
        if (hook) {
            hook(done, total);
        }
        return !cancel->load();
    };
}

ExportOutcome runExport(QPromise<ExportOutcome>& promise, const ExportRequest& request,
                        const std::shared_ptr<std::atomic<bool>>& cancel,
                        const std::function<void(std::uint64_t, std::uint64_t)>& hook)
{
    QElapsedTimer timer;
    timer.start();
    ExportOutcome outcome;
    outcome.output = request.output;
    const QString sourceFolder = QString::fromStdString(request.source->folder().string());
    promise.setProgressRange(0, 2 * ExportRunner::kStageRange);
    try {
        const auto backend = makeBackend(request.backend);
        ExportOptions options;
        options.backend = backend.get();
        options.output = request.output.toStdString();
        options.maxShardBytes = request.maxShardBytes;
        options.threads = request.threads;
        options.progress = stageProgress(promise, 0, ExportRunner::tr("Exporting"), cancel, hook);
        QuantPlan plan = request.plan;
        std::optional<CaptureCalibration> calibration;
        if (request.calibration) {
            auto calibrationOptions = *request.calibration;
            calibrationOptions.threads = request.threads;
            calibrationOptions.progress =
                stageProgress(promise, 0,
                              calibrationOptions.gptq ? ExportRunner::tr("Solving GPTQ")
                                                      : ExportRunner::tr("Choosing scales"),
                              cancel, hook, false);
            calibration.emplace(
                calibrateFromCapture(request.source, plan, options.output, calibrationOptions));
            options.calibrated = &calibration->weights();
            outcome.calibrationSummary = QString::fromStdString(calibration->summary());
        }
        options.modelCard =
            renderModelCard(modelCardInputs(*request.source, plan, options.output, request.card));
        outcome.result = exportCheckpoint(*request.source, plan, options);
        outcome.status = ExportOutcome::Status::Succeeded;
        if (request.verify && !cancel->load()) {
            VerifyOptions verify;
            verify.backend = backend.get();
            verify.threads = request.threads;
            verify.targetLayers = plan.targetLayers;
            verify.progress = stageProgress(promise, ExportRunner::kStageRange, ExportRunner::tr("Verifying"),
                                            cancel, hook);
            auto report = verifyExport(*request.source, Checkpoint::open(options.output), verify);
            // A verification stopped by Cancel returns what it checked so far: not a verdict. The export
            // itself is complete and stays.
            if (!cancel->load()) {
                outcome.verify = std::move(report);
            }
        }
    } catch (const IoError& e) {
        // IoError::what() names the file and the tensor.
        if (e.kind() == IoErrorKind::Cancelled) {
            outcome.status = ExportOutcome::Status::Cancelled;
        } else {
            outcome.status = ExportOutcome::Status::Failed;
            outcome.error = QString::fromStdString(e.what());
        }
    } catch (const QuantError& e) {
        outcome.status = ExportOutcome::Status::Failed;
        outcome.error = ExportRunner::tr("%1: %2").arg(sourceFolder, QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        // ExportError and the rest name the tensor; add the checkpoint they concern.
        outcome.status = ExportOutcome::Status::Failed;
        outcome.error = ExportRunner::tr("%1: %2").arg(sourceFolder, QString::fromStdString(e.what()));
    }
    if (outcome.status == ExportOutcome::Status::Failed && cancel->load() && outcome.error.isEmpty()) {
        outcome.status = ExportOutcome::Status::Cancelled;
    }
    outcome.seconds = static_cast<double>(timer.elapsed()) / 1000.0;
    return outcome;
}

} // namespace

ExportRunner::ExportRunner(QObject* parent) : QObject(parent) {}

// A running job holds its own copies (request, cancel flag, hook); we ask it to stop and let it finish
// on its own. Its watcher is our child and is disconnected with us.
ExportRunner::~ExportRunner()
{
    cancel();
}

void ExportRunner::setWorkerHook(std::function<void(std::uint64_t, std::uint64_t)> hook)
{
    m_hook = std::move(hook);
}

bool ExportRunner::start(ExportRequest request)
{
    if (m_running || !request.source) {
        return false;
    }
    const quint64 job = m_jobs.startJob();
    m_running = true;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    auto* watcher = new QFutureWatcher<ExportOutcome>(this);
    const auto postProgress = [this, watcher] {
        Q_EMIT progressChanged(watcher->progressValue(), watcher->progressText());
    };
    connect(watcher, &QFutureWatcher<ExportOutcome>::progressValueChanged, this, postProgress);
    connect(watcher, &QFutureWatcher<ExportOutcome>::progressTextChanged, this, postProgress);
    connect(watcher, &QFutureWatcher<ExportOutcome>::finished, this, [this, watcher, job] {
        watcher->deleteLater();
        if (!m_jobs.isCurrent(job)) {
            return;
        }
        m_running = false;
        Q_EMIT finished(watcher->future().result());
    });
    watcher->setFuture(QtConcurrent::run(
        [request = std::move(request), cancel = m_cancel, hook = m_hook](QPromise<ExportOutcome>& promise) {
            promise.addResult(runExport(promise, request, cancel, hook));
        }));
    return true;
}

void ExportRunner::cancel()
{
    if (m_cancel) {
        m_cancel->store(true);
    }
}

} // namespace spark
