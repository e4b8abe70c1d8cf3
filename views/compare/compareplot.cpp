#include "views/compare/compareplot.h"

#include "views/bench/benchplotqcp.h"

#include <QEvent>
#include <QVBoxLayout>

namespace spark {
namespace {

/// The module name without the "layers." every layer module starts with: the labels stand on end under
/// the bars, and their length is height taken from the bars.
QString tickLabel(const std::string& module)
{
    const auto name = QString::fromStdString(module);
    return name.startsWith(QStringLiteral("layers.")) ? name.mid(7) : name;
}

} // namespace

ComparePlot::ComparePlot(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    m_plot->setMinimumHeight(160);
    redraw();
}

void ComparePlot::setReport(std::shared_ptr<const CompareReport> report)
{
    m_report = std::move(report);
    redraw();
}

void ComparePlot::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        redraw();
    }
}

void ComparePlot::redraw()
{
    m_plot->clearPlottables();
    m_bars = 0;
    const auto pal = palette();
    m_plot->setBackground(pal.color(QPalette::Base));
    for (auto* axis : {m_plot->xAxis, m_plot->yAxis}) {
        axis->setBasePen(QPen(pal.color(QPalette::Text)));
        axis->setTickPen(QPen(pal.color(QPalette::Text)));
        axis->setSubTickPen(QPen(pal.color(QPalette::Text)));
        axis->setTickLabelColor(pal.color(QPalette::Text));
        axis->setLabelColor(pal.color(QPalette::Text));
    }
    m_plot->yAxis->setLabel(tr("rel. error (%)"));
    auto* exact = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    auto* differs = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    exact->setName(tr("bit-exact"));
    differs->setName(tr("differs"));
    exact->setBrush(pal.color(QPalette::Highlight));
    exact->setPen(Qt::NoPen);
    differs->setBrush(QColor(0xd0, 0x40, 0x40));
    differs->setPen(Qt::NoPen);
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    double maxErr = 0;
    if (m_report) {
        for (const auto& m : m_report->modules) {
            if (!m.quantizedInOutput || !m.relErr) {
                continue;
            }
            const double x = m_bars++;
            const double percent = *m.relErr * 100.0; // as the table shows it
            (m.bitExact == BitExactness::No ? differs : exact)->addData(x, percent);
            ticker->addTick(x, tickLabel(m.module));
            maxErr = std::max(maxErr, percent);
        }
    }
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setTickLabelRotation(90);
    m_plot->xAxis->setRange(-0.8, std::max(1, m_bars) - 0.2);
    m_plot->yAxis->setRange(0, maxErr > 0 ? maxErr * 1.1 : 1.0);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace spark
