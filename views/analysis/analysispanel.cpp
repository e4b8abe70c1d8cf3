#include "views/analysis/analysispanel.h"

#include "core/quant/quantbackend.h"
#include "views/analysis/analysiscontroller.h"
#include "views/shared/formatting.h"

#include <QComboBox>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QtConcurrent/QtConcurrentRun>

namespace spark {

AnalysisPanel::AnalysisPanel(AnalysisController* controller, QWidget* parent)
    : QWidget(parent), m_controller(controller)
{
    m_scheme = new QComboBox(this);
    m_scheme->setObjectName(QStringLiteral("schemeBox"));
    // The plan's default scheme, the same list as the Plan tab's (the window keeps the two one choice).
    for (const auto& s : weightSchemes()) {
        if (s.family == SchemeFamily::IntSymmetric && s.product) {
            m_scheme->addItem(schemeText(s), schemeText(s));
            m_scheme->setItemData(
                m_scheme->count() - 1,
                QString::fromLatin1(s.summary.data(), static_cast<qsizetype>(s.summary.size())),
                Qt::ToolTipRole);
        }
    }
    m_scheme->setToolTip(
        tr("The plan's default scheme (the Plan tab's Default scheme): what its targets get where no "
           "rule says otherwise; changing it is a plan edit (Ctrl+Z undoes it). F5 measures every module "
           "under the scheme the plan gives it, kept modules under this one. Results of each default are "
           "kept: switching back shows them again."));
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

    connect(m_scheme, &QComboBox::currentIndexChanged, this, [this] {
        const auto* s = findWeightScheme(m_scheme->currentData().toString().toStdString());
        m_controller->setScheme(s ? *s : *intSymmetricScheme(4, 128));
    });
    connect(m_analyze, &QPushButton::clicked, this, &AnalysisPanel::analyze);
    connect(m_cancel, &QPushButton::clicked, m_controller, &AnalysisController::cancel);
    connect(m_controller, &AnalysisController::schemeChanged, this, [this](const QString& name) {
        m_scheme->setCurrentIndex(std::max(0, m_scheme->findData(name)));
    });
    connect(m_controller, &AnalysisController::started, this, [this] {
        setRunning(true);
        m_progress->setValue(0);
        m_eta->setText(tr("estimating…"));
    });
    connect(m_controller, &AnalysisController::progressChanged, this, &AnalysisPanel::onProgress);
    connect(m_controller, &AnalysisController::finished, this, [this](bool cancelled) {
        setRunning(false);
        m_eta->clear();
        if (!cancelled) {
            m_progress->setValue(m_progress->maximum());
        }
    });
    connect(m_controller, &AnalysisController::draftChanged, this, [this](bool analyzable) {
        m_progress->setValue(0);
        m_analyze->setEnabled(analyzable);
    });
    setRunning(false);
    m_analyze->setEnabled(m_controller->canAnalyze());
}

void AnalysisPanel::analyze()
{
    // The backend first: a device that cannot start leaves the current results and any running job alone.
    std::shared_ptr<const QuantBackend> backend;
    if (m_backend->currentData().toString() == QStringLiteral("cuda")) {
        try {
            backend = makeBackend(Backend::Cuda);
            if (!m_controller->scheme().cuda) {
                Q_EMIT m_controller->statusMessage(
                    tr("The CUDA backend does not serve %1: it runs on the CPU.")
                        .arg(schemeText(m_controller->scheme())),
                    8000);
            }
        } catch (const std::exception& e) {
            Q_EMIT m_controller->statusMessage(
                tr("Cannot analyze on CUDA: %1").arg(QString::fromStdString(e.what())), 8000);
            return;
        }
    }
    m_controller->analyze(std::move(backend));
}

QString AnalysisPanel::timeLeftText() const
{
    return m_eta->text();
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

void AnalysisPanel::setRunning(bool running)
{
    m_progress->setVisible(running);
    m_eta->setVisible(running);
    m_cancel->setVisible(running);
    m_cancel->setEnabled(running);
}

} // namespace spark
