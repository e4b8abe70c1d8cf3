#include "views/tensors/histogramplot.h"

#include "core/quant/errorstats.h"

namespace spark {

HistogramPlot::HistogramPlot(const QString& xLabel, QWidget* parent)
    : QCustomPlot(parent), m_bars(new QCPBars(xAxis, yAxis))
{
    xAxis->setLabel(xLabel);
    yAxis->setLabel(tr("count"));
    m_bars->setWidthType(QCPBars::wtPlotCoords);
    setMinimumHeight(fontMetrics().height() * 9);
    setNoAntialiasingOnDrag(true);
    // QCustomPlot keeps every mouse event to itself; the wheel it does not use (wheelEvent) must reach the
    // scrolling panel around it.
    setAttribute(Qt::WA_NoMousePropagation, false);
    applyPalette();
}

QSize HistogramPlot::sizeHint() const
{
    return {fontMetrics().averageCharWidth() * 44, fontMetrics().height() * 11};
}

int HistogramPlot::barCount() const
{
    return m_bars->data()->size();
}

void HistogramPlot::setHistogram(const FixedHistogram* histogram)
{
    QVector<double> keys;
    QVector<double> values;
    if (histogram && !histogram->counts.empty()) {
        const double width = histogram->binWidth();
        m_bars->setWidth(width);
        double maxCount = 0;
        for (std::size_t i = 0; i < histogram->counts.size(); ++i) {
            keys.append(histogram->lo + width * (static_cast<double>(i) + 0.5));
            values.append(static_cast<double>(histogram->counts[i]));
            maxCount = std::max(maxCount, values.back());
        }
        xAxis->setRange(histogram->lo, histogram->hi);
        yAxis->setRange(0, std::max(1.0, maxCount * 1.05));
    }
    m_bars->setData(keys, values, true);
    replot(QCustomPlot::rpQueuedRefresh);
}

void HistogramPlot::changeEvent(QEvent* event)
{
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyPalette();
        replot(QCustomPlot::rpQueuedRefresh);
    }
}

void HistogramPlot::wheelEvent(QWheelEvent* event)
{
    if (interactions().testFlag(QCP::iRangeZoom)) {
        QCustomPlot::wheelEvent(event);
        return;
    }
    event->ignore(); // QApplication hands it on to the parents: the panel's scroll area scrolls
}

void HistogramPlot::applyPalette()
{
    const QPalette p = palette();
    const QColor text = p.color(QPalette::WindowText);
    setBackground(p.color(QPalette::Base));
    for (QCPAxis* axis : {xAxis, yAxis}) {
        axis->setBasePen(QPen(text));
        axis->setTickPen(QPen(text));
        axis->setSubTickPen(QPen(text));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
        axis->grid()->setPen(QPen(p.color(QPalette::Mid), 0, Qt::DotLine));
    }
    QColor fill = p.color(QPalette::Highlight);
    m_bars->setPen(QPen(fill.darker(120)));
    fill.setAlpha(170);
    m_bars->setBrush(fill);
}

} // namespace spark
