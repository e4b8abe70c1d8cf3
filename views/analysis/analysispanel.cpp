#include "views/analysis/analysispanel.h"

#include "core/quant/quantbackend.h"
#include "views/document/document.h"

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
    m_bits = new QComboBox(this);
    m_bits->setObjectName(QStringLiteral("bitsBox"));
    m_bits->addItem(tr("4-bit"), 4);
    m_bits->addItem(tr("8-bit"), 8);
    m_bits->setToolTip(tr("Bits per weight (symmetric integer, W4A16 / W8A16)."));
    m_group = new QComboBox(this);
    m_group->setObjectName(QStringLiteral("groupBox"));
    for (const int g : {32, 64, 128}) {
        m_group->addItem(tr("group %1").arg(g), g);
    }
    m_group->addItem(tr("per channel"), -1);
    m_group->setCurrentIndex(m_group->findData(128));
    m_group->setToolTip(tr("Input columns that share one scale; per channel: one scale per output row."));
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
    layout->addWidget(m_bits);
    layout->addWidget(m_group);
    layout->addWidget(new QLabel(tr("Backend:"), this));
    layout->addWidget(m_backend);
    layout->addWidget(m_analyze);
    layout->addWidget(m_progress);
    layout->addWidget(m_eta);
    layout->addWidget(m_cancel);

    connect(m_bits, &QComboBox::currentIndexChanged, this, &AnalysisPanel::onSchemeEdited);
    connect(m_group, &QComboBox::currentIndexChanged, this, &AnalysisPanel::onSchemeEdited);
    connect(m_analyze, &QPushButton::clicked, this, &AnalysisPanel::analyze);
    connect(m_cancel, &QPushButton::clicked, this, &AnalysisPanel::cancel);
    connect(m_job, &AnalysisJob::tensorAnalyzed, this, &AnalysisPanel::onResult);
    connect(m_job, &AnalysisJob::progressChanged, this, &AnalysisPanel::onProgress);
    connect(m_job, &AnalysisJob::finished, this, &AnalysisPanel::onFinished);
    connect(m_document, &Document::snapshotChanged, this, &AnalysisPanel::onSnapshotChanged);
    setRunning(false);
    onSnapshotChanged();
}

QuantScheme AnalysisPanel::scheme() const
{
    return {m_bits->currentData().toInt(), m_group->currentData().toInt()};
}

void AnalysisPanel::setScheme(const QuantScheme& scheme)
{
    const QSignalBlocker blockBits(m_bits);
    const QSignalBlocker blockGroup(m_group);
    m_bits->setCurrentIndex(std::max(0, m_bits->findData(scheme.bits)));
    m_group->setCurrentIndex(std::max(0, m_group->findData(scheme.groupSize)));
    onSchemeEdited();
}

const TensorQuantResult* AnalysisPanel::result(const QString& tensor) const
{
    const auto it = m_results.constFind(tensor);
    return it == m_results.constEnd() ? nullptr : &it.value();
}

QString AnalysisPanel::timeLeftText() const
{
    return m_eta->text();
}

void AnalysisPanel::onSchemeEdited()
{
    Q_EMIT schemeChanged(scheme());
    // Errors of another scheme would mislead: re-run an analysis the user already asked for.
    if (m_hasRun) {
        analyze();
    }
}

void AnalysisPanel::analyze()
{
    const auto snapshot = m_document->snapshot();
    if (!snapshot || !snapshot->checkpoint) {
        Q_EMIT statusMessage(tr("Open a draft checkpoint to analyze it."), 5000);
        return;
    }
    const QuantScheme selected = scheme();
    if (!selected.isValid()) {
        Q_EMIT statusMessage(
            tr("The scheme %1 is not supported.").arg(QString::fromStdString(selected.label())), 5000);
        return;
    }
    // The backend first: a device that cannot start leaves the current results and any running job alone.
    std::shared_ptr<const QuantBackend> backend;
    if (m_backend->currentData().toString() == QStringLiteral("cuda")) {
        try {
            backend = makeBackend(Backend::Cuda);
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
    m_expected = m_job->start(snapshot->checkpoint, selected, std::move(backend));
    setRunning(true);
    m_progress->setValue(0);
    m_eta->setText(tr("estimating…"));
    Q_EMIT started(m_expected);
    Q_EMIT statusMessage(tr("Analyzing %n tensor(s) with %1…", nullptr, m_expected)
                             .arg(QString::fromStdString(selected.name())),
                         0);
}

void AnalysisPanel::cancel()
{
    m_job->cancel();
}

void AnalysisPanel::onResult(const TensorQuantResult& result)
{
    m_results.insert(result.tensor, result);
    TensorAnalysisUpdate update;
    update.tensor = result.tensor;
    if (result.stats) {
        update.relError = result.stats->relErr;
        update.maxError = result.stats->maxAbsErr;
    } else {
        ++m_failed;
    }
    m_document->setAnalysis({update});
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
    m_failed = 0;
    m_hasRun = false;
    m_progress->setValue(0);
    const auto snapshot = m_document->snapshot();
    m_analyze->setEnabled(snapshot && snapshot->checkpoint);
}

void AnalysisPanel::setRunning(bool running)
{
    m_progress->setVisible(running);
    m_eta->setVisible(running);
    m_cancel->setVisible(running);
    m_cancel->setEnabled(running);
}

} // namespace spark
