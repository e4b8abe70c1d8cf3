#include "views/acceptance/acceptanceplot.h"

#include "views/bench/benchplot.h"
#include "views/bench/benchplotqcp.h"

#include <QEvent>
#include <QVBoxLayout>

namespace spark {
namespace {

// Okabe–Ito blue and orange: distinct for colour-blind readers and legible on light and dark bases.
const QColor kBaseColor(0, 114, 178);
const QColor kQuantColor(230, 159, 0);

} // namespace

AcceptancePlot::AcceptancePlot(QWidget* parent)
    : QWidget(parent), m_plot(new QCustomPlot(this)), m_group(new QCPBarsGroup(m_plot))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    m_plot->setObjectName(QStringLiteral("acceptancePlot"));
    // Beside the wide per-position table a splitter would leave the bars no room: keep room for k bars.
    m_plot->setMinimumSize(fontMetrics().averageCharWidth() * 48, fontMetrics().height() * 12);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_plot->legend->setWrap(2);
    // The plot's own PaletteChange arrives after its children's palettes are set: listen there.
    m_plot->installEventFilter(this);
    rebuild();
}

void AcceptancePlot::setSummary(const AcceptanceSummary& summary, const QString& quantName)
{
    m_summary = summary;
    m_quantName = quantName;
    rebuild();
}

void AcceptancePlot::clear()
{
    setSummary({}, {});
}

bool AcceptancePlot::save(const QString& path, QString* error)
{
    return BenchPlot::save(*m_plot, path, std::max(m_plot->width(), 800), std::max(m_plot->height(), 500),
                           error);
}

void AcceptancePlot::showLegend(bool show)
{
    // The legend in a row of its own above the bars, outside the axis rect: it covers no bar and no axis.
    // Hidden, it leaves the layout: left there, its own small width capped the column it shares with the
    // axis rect, and the empty plot's note was cut in a 50-pixel rect.
    QCPLayoutGrid* layout = m_plot->plotLayout();
    const bool inLayout = layout->hasElement(0, 0) && layout->element(0, 0) == m_plot->legend;
    if (show && !inLayout) {
        layout->insertRow(0);
        layout->addElement(0, 0, m_plot->legend);
        layout->setRowStretchFactor(0, 0.001);
    } else if (!show && inLayout) {
        layout->take(m_plot->legend);
        layout->simplify();
    }
    m_plot->legend->setVisible(show);
}

bool AcceptancePlot::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_plot && event->type() == QEvent::PaletteChange) {
        rebuild();
    }
    return QWidget::eventFilter(watched, event);
}

void AcceptancePlot::rebuild()
{
    m_plot->clearPlottables();
    m_plot->clearItems();
    const QColor whisker = m_plot->palette().color(QPalette::WindowText);
    const auto addSeries = [&](const QString& name, const QColor& color, double PositionStats::*value,
                               double PositionStats::*low, double PositionStats::*high) {
        QVector<double> x, y, minus, plus;
        for (std::size_t i = 0; i < m_summary.positions.size(); ++i) {
            const auto& p = m_summary.positions[i];
            x << static_cast<double>(i);
            y << p.*value;
            minus << std::max(0.0, p.*value - p.*low);
            plus << std::max(0.0, p.*high - p.*value);
        }
        auto* bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
        bars->setName(name);
        bars->setWidth(0.35);
        bars->setBarsGroup(m_group);
        bars->setPen(QPen(color));
        QColor fill = color;
        fill.setAlpha(190);
        bars->setBrush(fill);
        bars->setData(x, y, true);
        auto* errors = new QCPErrorBars(m_plot->xAxis, m_plot->yAxis);
        errors->removeFromLegend();
        errors->setDataPlottable(bars);
        errors->setPen(QPen(whisker, 1.2));
        errors->setWhiskerWidth(6);
        errors->setData(minus, plus);
    };
    const bool empty = m_summary.positions.empty();
    if (!empty) {
        addSeries(tr("BF16"), kBaseColor, &PositionStats::acceptBase, &PositionStats::acceptBaseLow,
                  &PositionStats::acceptBaseHigh);
        if (m_summary.paired) {
            addSeries(m_quantName.isEmpty() ? tr("quantized") : m_quantName, kQuantColor,
                      &PositionStats::acceptQuant, &PositionStats::acceptQuantLow,
                      &PositionStats::acceptQuantHigh);
        }
    }
    // Positions are whole numbers: label each one, nothing between.
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (std::size_t i = 0; i < m_summary.positions.size(); ++i) {
        ticker->addTick(static_cast<double>(i), QString::number(i));
    }
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setLabel(tr("draft position i"));
    m_plot->yAxis->setLabel(tr("a_i, 95% interval"));
    m_plot->xAxis->setRange(-0.6, std::max(0.6, static_cast<double>(m_summary.positions.size()) - 0.4));
    m_plot->yAxis->setRange(0, 1.05);
    showLegend(!empty);
    for (auto* axis : {m_plot->xAxis, m_plot->yAxis}) {
        axis->setTicks(!empty);
        axis->setTickLabels(!empty);
    }
    BenchPlot::setEmptyNote(*m_plot, nullptr,
                            empty ? tr("No run yet: choose a capture and press Run.") : QString());
    BenchPlot::applyPalette(*m_plot);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace spark
