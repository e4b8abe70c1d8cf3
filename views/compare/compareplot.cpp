#include "views/compare/compareplot.h"

#include "views/bench/benchplotqcp.h"

#include <QEvent>
#include <QFontMetrics>
#include <QVBoxLayout>

namespace spark {
namespace {

/// The labels under the bars stand on end, and their length is height taken from the bars: the part every
/// dotted name shares ("layers.", "midlayer.") is dropped, and what is left is elided in the middle to about
/// sixteen characters (the table above names each module in full).
QStringList tickLabels(const QStringList& modules, const QFontMetrics& metrics)
{
    QString shared;
    bool first = true;
    for (const QString& name : modules) {
        if (!name.contains(QLatin1Char('.'))) {
            continue;
        }
        if (first) {
            shared = name.left(name.lastIndexOf(QLatin1Char('.')) + 1);
            first = false;
        }
        while (!name.startsWith(shared)) {
            shared.chop(1);
            shared = shared.left(shared.lastIndexOf(QLatin1Char('.')) + 1);
        }
    }
    QStringList labels;
    for (const QString& name : modules) {
        labels.append(metrics.elidedText(name.startsWith(shared) ? name.mid(shared.size()) : name,
                                         Qt::ElideMiddle, metrics.averageCharWidth() * 16));
    }
    return labels;
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
    QStringList names;
    double maxErr = 0;
    if (m_report) {
        for (const auto& m : m_report->modules) {
            if (!m.quantizedInOutput || !m.relErr) {
                continue;
            }
            const double x = m_bars++;
            const double percent = *m.relErr * 100.0; // as the table shows it
            (m.bitExact == BitExactness::No ? differs : exact)->addData(x, percent);
            names.append(QString::fromStdString(m.module));
            maxErr = std::max(maxErr, percent);
        }
    }
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    const QStringList labels = tickLabels(names, QFontMetrics(m_plot->xAxis->tickLabelFont()));
    for (int i = 0; i < labels.size(); ++i) {
        ticker->addTick(i, labels[i]);
    }
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setTickLabelRotation(90);
    m_plot->xAxis->setRange(-0.8, std::max(1, m_bars) - 0.2);
    m_plot->yAxis->setRange(0, maxErr > 0 ? maxErr * 1.1 : 1.0);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace spark
