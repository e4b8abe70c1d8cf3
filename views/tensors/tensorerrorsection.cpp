#include "views/tensors/tensorerrorsection.h"

#include "views/analysis/analysiscontroller.h"
#include "views/shared/formatting.h"
#include "views/tensors/histogramplot.h"

#include <QLabel>
#include <QVBoxLayout>

namespace spark {

TensorErrorSection::TensorErrorSection(AnalysisController* analysis, QWidget* parent)
    : QWidget(parent), m_analysis(analysis)
{
    m_stats = new QLabel(this);
    m_stats->setObjectName(QStringLiteral("errorStats"));
    m_stats->setWordWrap(true);
    m_stats->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_stats->setToolTip(tr("Rel. error = ‖W − Q(W)‖ / ‖W‖ (Frobenius norm), where Q(W) is the weight after "
                           "quantizing and dequantizing it as vLLM's kernels do. Max and p95 are absolute "
                           "errors per element; SNR = 10·log10(Σw² / Σ(w − Q(w))²). Tensors of 2 Mi elements "
                           "or more count p95 and the histograms on a fixed sample of at least 1 Mi elements "
                           "(every other figure covers every element)."));
    m_weights = new HistogramPlot(tr("weight / group scale"), this);
    m_weights->setObjectName(QStringLiteral("weightHistogram"));
    m_errors = new HistogramPlot(tr("error / group scale"), this);
    m_errors->setObjectName(QStringLiteral("errorHistogram"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stats);
    layout->addWidget(m_weights);
    layout->addWidget(m_errors);
    connect(m_analysis, &AnalysisController::tensorAnalyzed, this, [this](const QString& tensor) {
        if (tensor == m_selection.tensor || m_selection.kind == TensorSelection::Group) {
            update();
        }
    });
    // Every change of state rereads the result: a finished or cancelled run must not leave "Analyzing…".
    connect(m_analysis, &AnalysisController::started, this, &TensorErrorSection::update);
    connect(m_analysis, &AnalysisController::finished, this, &TensorErrorSection::update);
    connect(m_analysis, &AnalysisController::resultsReset, this, &TensorErrorSection::update);
    update();
}

void TensorErrorSection::setSelection(const TensorSelection& selection)
{
    m_selection = selection;
    update();
}

void TensorErrorSection::setTensor(const QString& tensor)
{
    setSelection(tensor.isEmpty() ? TensorSelection{}
                                  : TensorSelection{TensorSelection::Tensor, tensor, tensor});
}

QString TensorErrorSection::statsText() const
{
    return m_stats->text();
}

QString TensorErrorSection::measuredText(const TensorQuantResult& result) const
{
    return schemeAndRoundingText(result.scheme ? *result.scheme : m_analysis->scheme(), result.rounding);
}

void TensorErrorSection::showGroup()
{
    // A layer: its worst tensor, the one to look at first.
    const QString prefix = m_selection.name + QLatin1Char('.');
    const TensorQuantResult* worst = nullptr;
    for (const auto& result : m_analysis->results()) {
        if (result.stats && result.stats->relErr && result.tensor.startsWith(prefix) &&
            (!worst || *result.stats->relErr > *worst->stats->relErr)) {
            worst = &result;
        }
    }
    if (worst) {
        m_stats->setText(tr("Worst rel. error %1 under %2 (%3)")
                             .arg(formatRelError(*worst->stats->relErr), measuredText(*worst),
                                  worst->tensor.mid(prefix.size())));
    } else {
        m_stats->setText(m_analysis->isRunning() ? tr("Analyzing…")
                                                 : tr("Not analyzed: press F5 to analyze."));
    }
}

void TensorErrorSection::update()
{
    const QString& tensor = m_selection.tensor;
    const TensorQuantResult* result = tensor.isEmpty() ? nullptr : m_analysis->result(tensor);
    const bool hasStats = result && result->stats;
    m_weights->setVisible(hasStats);
    m_errors->setVisible(hasStats);
    if (!result) {
        m_weights->setHistogram(nullptr);
        m_errors->setHistogram(nullptr);
        if (m_selection.kind == TensorSelection::Group) {
            showGroup();
        } else if (tensor.isEmpty()) {
            m_stats->setText(tr("No weight to measure."));
        } else if (!m_analysis->isAnalyzable(tensor)) {
            m_stats->setText(tr("Not measured: analyze measures 2-D weights whose columns divide by the "
                                "scheme's group."));
        } else if (m_analysis->isRunning()) {
            m_stats->setText(tr("Analyzing…"));
        } else {
            m_stats->setText(tr("Not analyzed: press F5 to analyze."));
        }
        return;
    }
    if (!hasStats) {
        m_stats->setText(tr("No statistics: %1").arg(result->error));
        return;
    }
    const auto& s = *result->stats;
    auto number = [](const std::optional<double>& v, char format, int precision) {
        return v ? QString::number(*v, format, precision) : tr("n/a");
    };
    // A planned module was measured under its plan, the others under the selected scheme: name which.
    QString text =
        tr("Rel. error %1 under %2 · max %3 · p95 %4 · SNR %5 dB")
            .arg(s.relErr ? formatRelError(*s.relErr) : tr("n/a"), measuredText(*result),
                 number(s.maxAbsErr, 'g', 4), number(s.p95AbsErr, 'g', 4), number(s.snrDb, 'f', 1));
    if (s.dequantNonFinite > 0) {
        text += tr(" · %n dequantized value(s) overflow", nullptr, static_cast<int>(s.dequantNonFinite));
    }
    if (s.histogramStride > 1) {
        text += tr(" · p95 and histograms from 1 in %1 elements").arg(s.histogramStride);
    }
    m_stats->setText(text);
    m_weights->setHistogram(&s.weightHist);
    m_errors->setHistogram(&s.errorHist);
}

} // namespace spark
