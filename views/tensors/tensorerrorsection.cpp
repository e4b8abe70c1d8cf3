#include "views/tensors/tensorerrorsection.h"

#include "views/analysis/analysispanel.h"
#include "views/tensors/histogramplot.h"

#include <QLabel>
#include <QVBoxLayout>

namespace spark {

TensorErrorSection::TensorErrorSection(AnalysisPanel* analysis, QWidget* parent)
    : QWidget(parent), m_analysis(analysis)
{
    m_stats = new QLabel(this);
    m_stats->setObjectName(QStringLiteral("errorStats"));
    m_stats->setWordWrap(true);
    m_stats->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_stats->setToolTip(tr("Rel. error = ‖W − Q(W)‖ / ‖W‖ (Frobenius norm), where Q(W) is the weight after "
                           "quantizing and dequantizing it as vLLM's kernels do. Max and p95 are absolute "
                           "errors per element; SNR = 10·log10(Σw² / Σ(w − Q(w))²)."));
    m_weights = new HistogramPlot(tr("weight / group scale"), this);
    m_weights->setObjectName(QStringLiteral("weightHistogram"));
    m_errors = new HistogramPlot(tr("error / group scale"), this);
    m_errors->setObjectName(QStringLiteral("errorHistogram"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stats);
    layout->addWidget(m_weights);
    layout->addWidget(m_errors);
    connect(m_analysis, &AnalysisPanel::tensorAnalyzed, this, [this](const QString& tensor) {
        if (tensor == m_tensor) {
            update();
        }
    });
    connect(m_analysis, &AnalysisPanel::started, this, &TensorErrorSection::update);
    update();
}

void TensorErrorSection::setTensor(const QString& tensor)
{
    m_tensor = tensor;
    update();
}

QString TensorErrorSection::statsText() const
{
    return m_stats->text();
}

void TensorErrorSection::update()
{
    const TensorQuantResult* result = m_tensor.isEmpty() ? nullptr : m_analysis->result(m_tensor);
    const bool hasStats = result && result->stats;
    m_weights->setVisible(hasStats);
    m_errors->setVisible(hasStats);
    if (!result) {
        m_stats->setText(m_analysis->isRunning() ? tr("Analyzing…")
                                                 : tr("Not analyzed: press F5 to analyze."));
        m_weights->setHistogram(nullptr);
        m_errors->setHistogram(nullptr);
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
    QString text = tr("Rel. error %1 · max %2 · p95 %3 · SNR %4 dB")
                       .arg(number(s.relErr, 'g', 4), number(s.maxAbsErr, 'g', 4),
                            number(s.p95AbsErr, 'g', 4), number(s.snrDb, 'f', 1));
    if (s.dequantNonFinite > 0) {
        text += tr(" · %n dequantized value(s) overflow", nullptr, static_cast<int>(s.dequantNonFinite));
    }
    m_stats->setText(text);
    m_weights->setHistogram(&s.weightHist);
    m_errors->setHistogram(&s.errorHist);
}

} // namespace spark
