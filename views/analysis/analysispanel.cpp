#include "views/analysis/analysispanel.h"

#include "core/io/checkpoint.h"
#include "core/plan/quantplan.h"
#include "core/quant/analyzer.h"
#include "core/quant/quantbackend.h"
#include "views/document/document.h"
#include "views/shared/formatting.h"

#include <QComboBox>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QtConcurrent/QtConcurrentRun>

namespace spark {

AnalysisPanel::AnalysisPanel(Document* document, QWidget* parent)
    : QWidget(parent), m_document(document), m_job(new AnalysisJob(this))
{
    m_scheme = new QComboBox(this);
    m_scheme->setObjectName(QStringLiteral("schemeBox"));
    for (const auto& s : weightSchemes()) {
        if (s.quantizes() && s.product) {
            m_scheme->addItem(schemeText(s), schemeText(s));
            m_scheme->setItemData(
                m_scheme->count() - 1,
                QString::fromLatin1(s.summary.data(), static_cast<qsizetype>(s.summary.size())),
                Qt::ToolTipRole);
        }
    }
    m_scheme->setToolTip(
        tr("The scheme to measure every weight under (F5 runs it). Results of each scheme are "
           "kept: switching back shows them again. The plan's schemes are set on the Plan tab."));
    m_backend = new QComboBox(this);
    m_backend->setObjectName(QStringLiteral("backendBox"));
    m_backend->addItem(tr("CPU"), QStringLiteral("cpu"));
    // Looking for a device starts the CUDA runtime (up to a second on a GPU machine): do it off the GUI
    // thread at start-up and offer CUDA once it answers.
    auto* probe = new QFutureWatcher<QString>(this);
    connect(probe, &QFutureWatcherBase::finished, this, [this, probe] {
        probe->deleteLater();
        const QString device = probe->result();
        if (!device.isEmpty()) {
            m_backend->addItem(tr("CUDA"), QStringLiteral("cuda"));
            m_backend->setItemData(m_backend->count() - 1, device, Qt::ToolTipRole);
        }
    });
    probe->setFuture(QtConcurrent::run(
        [] { return cudaAvailable() ? QString::fromStdString(cudaDeviceDescription()) : QString(); }));
    m_backend->setToolTip(tr("Where the error statistics are computed. CPU and CUDA count the same "
                             "histograms; the error sums agree to about 1e-12."));

    m_analyze =
        new QPushButton(QIcon::fromTheme(QStringLiteral("media-playback-start")), tr("Analyze"), this);
    m_analyze->setObjectName(QStringLiteral("analyzeButton"));
    m_analyze->setToolTip(tr("Quantize every 2-D weight in memory and measure the error (F5). Nothing is "
                             "written. Rel. error = ‖W − Q(W)‖ / ‖W‖ (Frobenius), with Q(W) the weight as "
                             "vLLM's kernels see it after dequantization."));
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(fontMetrics().averageCharWidth() * 24);
    m_progress->setTextVisible(true);
    m_eta = new QLabel(this);
    m_eta->setObjectName(QStringLiteral("analysisEta"));
    m_cancel = new QPushButton(QIcon::fromTheme(QStringLiteral("process-stop")), tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("cancelAnalysis"));
    m_cancel->setToolTip(tr("Stop the analysis (Esc). Errors computed so far stay."));

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(new QLabel(tr("Scheme:"), this));
    layout->addWidget(m_scheme);
    layout->addWidget(new QLabel(tr("Backend:"), this));
    layout->addWidget(m_backend);
    layout->addWidget(m_analyze);
    layout->addWidget(m_progress);
    layout->addWidget(m_eta);
    layout->addWidget(m_cancel);

    connect(m_scheme, &QComboBox::currentIndexChanged, this, &AnalysisPanel::onSchemeEdited);
    connect(m_analyze, &QPushButton::clicked, this, &AnalysisPanel::analyze);
    connect(m_cancel, &QPushButton::clicked, this, &AnalysisPanel::cancel);
    connect(m_job, &AnalysisJob::tensorAnalyzed, this, &AnalysisPanel::onResult);
    connect(m_job, &AnalysisJob::progressChanged, this, &AnalysisPanel::onProgress);
    connect(m_job, &AnalysisJob::finished, this, &AnalysisPanel::onFinished);
    connect(m_document, &Document::snapshotChanged, this, &AnalysisPanel::onSnapshotChanged);
    setRunning(false);
    onSnapshotChanged();
}

const WeightScheme& AnalysisPanel::scheme() const
{
    const auto* s = findWeightScheme(m_scheme->currentData().toString().toStdString());
    return s ? *s : *intSymmetricScheme(4, 128);
}

void AnalysisPanel::setScheme(const WeightScheme& scheme)
{
    m_scheme->setCurrentIndex(std::max(0, m_scheme->findData(schemeText(scheme))));
}

const TensorQuantResult* AnalysisPanel::result(const QString& tensor) const
{
    const auto it = m_results.constFind(tensor);
    return it == m_results.constEnd() ? nullptr : &it.value();
}

bool AnalysisPanel::isAnalyzable(const QString& tensor) const
{
    const auto snapshot = m_document->snapshot();
    const CheckpointTensor* found =
        snapshot && snapshot->checkpoint ? snapshot->checkpoint->find(tensor.toStdString()) : nullptr;
    return found && spark::isAnalyzable(found->info, scheme());
}

QString AnalysisPanel::timeLeftText() const
{
    return m_eta->text();
}

void AnalysisPanel::onSchemeEdited()
{
    // A full analysis takes a while: switching schemes shows what was measured under the new one (kept from
    // an earlier run) or nothing, and F5 measures it. Errors of another scheme would mislead.
    m_job->cancel();
    const auto name = schemeText(scheme());
    m_results = m_kept.value(name);
    m_failed = 0;
    m_document->clearAnalysis();
    Q_EMIT analysisCleared();
    std::vector<TensorAnalysisUpdate> updates;
    for (const auto& result : std::as_const(m_results)) {
        updates.push_back(countedUpdate(result));
    }
    m_document->setAnalysis(updates);
    Q_EMIT resultsReset();
    Q_EMIT schemeChanged(name);
    if (m_hasRun && m_results.isEmpty()) {
        Q_EMIT statusMessage(tr("%1 not analyzed yet: press F5 to measure it.").arg(name), 5000);
    }
}

void AnalysisPanel::analyze()
{
    const auto snapshot = m_document->snapshot();
    if (!snapshot || !snapshot->checkpoint) {
        Q_EMIT statusMessage(tr("Open a draft checkpoint to analyze it."), 5000);
        return;
    }
    const WeightScheme& selected = scheme();
    // The backend first: a device that cannot start leaves the current results and any running job alone.
    std::shared_ptr<const QuantBackend> backend;
    if (m_backend->currentData().toString() == QStringLiteral("cuda")) {
        try {
            backend = makeBackend(Backend::Cuda);
            if (!selected.cuda) {
                Q_EMIT statusMessage(
                    tr("The CUDA backend does not serve %1: it runs on the CPU.").arg(schemeText(selected)),
                    8000);
            }
        } catch (const std::exception& e) {
            Q_EMIT statusMessage(tr("Cannot analyze on CUDA: %1").arg(QString::fromStdString(e.what())),
                                 8000);
            return;
        }
    }
    m_job->cancel(); // its results are dropped from here on
    m_results.clear();
    m_failed = 0;
    m_hasRun = true;
    m_document->clearAnalysis();
    Q_EMIT analysisCleared();
    AnalyzeOptions options;
    options.scheme = &selected;
    if (const auto plan = m_plan ? m_plan() : nullptr; plan && !snapshot->isQuantized()) {
        for (const auto* m : plan->quantizedModules()) {
            options.tensorSchemes[m->weightTensor] = m->scheme;
            options.tensorRoundings[m->weightTensor] = m->rounding ? m->rounding : &rtnRounding();
        }
    }
    m_expected = m_job->start(snapshot->checkpoint, options, std::move(backend));
    setRunning(true);
    m_progress->setValue(0);
    m_eta->setText(tr("estimating…"));
    Q_EMIT started(m_expected);
    Q_EMIT statusMessage(
        options.tensorSchemes.empty()
            ? tr("Analyzing %n tensor(s) with %1…", nullptr, m_expected).arg(schemeText(selected))
            : tr("Analyzing %n tensor(s): planned modules as planned, the others with %1…", nullptr,
                 m_expected)
                  .arg(schemeText(selected)),
        0);
}

void AnalysisPanel::cancel()
{
    m_job->cancel();
}

TensorAnalysisUpdate AnalysisPanel::countedUpdate(const TensorQuantResult& result)
{
    TensorAnalysisUpdate update;
    update.tensor = result.tensor;
    update.measuredScheme = result.scheme;
    update.measuredRounding = result.rounding;
    if (result.stats) {
        update.relError = result.stats->relErr;
        update.maxError = result.stats->maxAbsErr;
        update.sqNorm = result.stats->sqNorm;
        update.sqErr = result.stats->sqErr;
    } else {
        ++m_failed;
    }
    return update;
}

void AnalysisPanel::onResult(const TensorQuantResult& result)
{
    m_results.insert(result.tensor, result);
    m_document->setAnalysis({countedUpdate(result)});
    Q_EMIT tensorAnalyzed(result.tensor);
}

void AnalysisPanel::onProgress(double fraction, qint64 msLeft)
{
    m_progress->setValue(static_cast<int>(fraction * 1000));
    if (msLeft < 0) {
        m_eta->setText(tr("estimating…"));
    } else if (msLeft < 60000) {
        m_eta->setText(tr("about %1 s left").arg((msLeft + 999) / 1000));
    } else {
        m_eta->setText(tr("about %1 min left").arg((msLeft + 59999) / 60000));
    }
}

void AnalysisPanel::onFinished(bool cancelled)
{
    setRunning(false);
    m_eta->clear();
    if (cancelled) {
        Q_EMIT statusMessage(
            tr("Analysis cancelled after %1 of %n tensor(s).", nullptr, m_expected).arg(m_results.size()),
            8000);
    } else {
        m_kept.insert(schemeText(m_job->scheme()), m_results);
        m_progress->setValue(m_progress->maximum());
        QString text = tr("Analysis finished: %n tensor(s)", nullptr, static_cast<int>(m_results.size()));
        if (m_failed > 0) {
            text += tr(", %n without statistics (NaN/Inf or read errors: see the detail panel)", nullptr,
                       m_failed);
        }
        Q_EMIT statusMessage(text + QLatin1Char('.'), 8000);
    }
    Q_EMIT finished(cancelled);
}

void AnalysisPanel::onSnapshotChanged()
{
    // Results of another checkpoint mean nothing here; the job id makes sure none arrive late.
    m_job->cancel();
    m_results.clear();
    m_kept.clear();
    m_failed = 0;
    m_hasRun = false;
    m_progress->setValue(0);
    const auto snapshot = m_document->snapshot();
    m_analyze->setEnabled(snapshot && snapshot->checkpoint);
    Q_EMIT resultsReset();
}

void AnalysisPanel::setRunning(bool running)
{
    m_progress->setVisible(running);
    m_eta->setVisible(running);
    m_cancel->setVisible(running);
    m_cancel->setEnabled(running);
}

} // namespace spark
