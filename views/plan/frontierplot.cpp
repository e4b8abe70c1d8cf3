#include "views/plan/frontierplot.h"

#include "views/bench/benchplot.h"
#include "views/bench/benchplotqcp.h"

#include <QEvent>
#include <QVBoxLayout>

namespace spark {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

} // namespace

FrontierPlot::FrontierPlot(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    m_plot->setObjectName(QStringLiteral("frontierPlot"));
    m_plot->setMinimumHeight(fontMetrics().height() * 16);
    m_plot->legend->setVisible(true);
    m_plot->setInteractions(QCP::iSelectPlottables);
    // The plot's own PaletteChange arrives after its children's palettes are set: listen there.
    m_plot->installEventFilter(this);
    // A preset or the current plan may sit on top of a frontier point and take the click: pick the frontier
    // point nearest to the click on screen instead of trusting the plottable that was hit.
    connect(m_plot, &QCustomPlot::plottableClick, this,
            [this](QCPAbstractPlottable*, int, QMouseEvent* event) {
                int best = -1;
                double bestDistance = 0;
                for (std::size_t i = 0; i < m_frontier.size(); ++i) {
                    const double dx = m_plot->xAxis->coordToPixel(xOf(m_frontier[i])) - event->position().x();
                    const double dy = m_plot->yAxis->coordToPixel(m_frontier[i].loss) - event->position().y();
                    const double distance = dx * dx + dy * dy;
                    if (best < 0 || distance < bestDistance) {
                        best = static_cast<int>(i);
                        bestDistance = distance;
                    }
                }
                const double tolerance = m_plot->selectionTolerance() * 2.0;
                if (best >= 0 && bestDistance <= tolerance * tolerance) {
                    Q_EMIT pointClicked(best);
                }
            });
    rebuild();
}

void FrontierPlot::setFrontier(const std::vector<FrontierPoint>& frontier, const std::vector<Marker>& markers)
{
    m_frontier = frontier;
    m_markers = markers;
    // Cost increases along the frontier: its last point is the most any plan of the sweep streams.
    m_mebibytes = !m_frontier.empty() && static_cast<double>(m_frontier.back().streamedBytes) < kGiB;
    rebuild();
}

void FrontierPlot::setCurrent(const std::optional<FrontierPoint>& current)
{
    m_current = current;
    rebuild();
}

void FrontierPlot::setLossLabel(const QString& label)
{
    m_lossLabel = label;
    rebuild();
}

void FrontierPlot::setBandwidth(std::optional<double> gbps)
{
    m_gbps = gbps;
    rebuild();
}

double FrontierPlot::xOf(const FrontierPoint& point) const
{
    const auto bytes = static_cast<double>(point.streamedBytes);
    return m_gbps ? bytes / (*m_gbps * 1e9) * 1e3 : bytes / (m_mebibytes ? kMiB : kGiB);
}

bool FrontierPlot::save(const QString& path, QString* error)
{
    return BenchPlot::save(*m_plot, path, std::max(m_plot->width(), 800), std::max(m_plot->height(), 500),
                           error);
}

bool FrontierPlot::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_plot && event->type() == QEvent::PaletteChange) {
        rebuild();
    }
    return QWidget::eventFilter(watched, event);
}

void FrontierPlot::rebuild()
{
    m_plot->clearPlottables();
    m_plot->clearItems();
    const QPalette palette = m_plot->palette();
    const QColor line = palette.color(QPalette::Highlight);
    const QColor text = palette.color(QPalette::Text);
    // Graph 0 is the frontier: pointClicked maps its data indices to frontier points.
    auto* frontier = m_plot->addGraph();
    frontier->setName(tr("Pareto frontier (exact)"));
    frontier->setPen(QPen(line, 1.5));
    frontier->setLineStyle(QCPGraph::lsStepLeft);
    frontier->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, line, line, 5));
    QVector<double> xs, ys;
    for (const auto& p : m_frontier) {
        xs << xOf(p);
        ys << p.loss;
    }
    // Sorted by x already (cost increases along the frontier); keep the data index equal to the point index.
    frontier->setData(xs, ys, true);
    static const QColor markerColors[] = {QColor(230, 159, 0), QColor(0, 158, 115), QColor(204, 121, 167),
                                          QColor(86, 180, 233), QColor(213, 94, 0)};
    int colorIndex = 0;
    for (const auto& m : m_markers) {
        const QColor color = markerColors[colorIndex++ % 5];
        auto* graph = m_plot->addGraph();
        graph->setName(m.label);
        graph->setLineStyle(QCPGraph::lsNone);
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, color, color, 10));
        graph->setData({xOf(m.point)}, {m.point.loss});
        graph->setSelectable(QCP::stNone);
    }
    if (m_current) {
        auto* graph = m_plot->addGraph();
        graph->setName(tr("current plan"));
        graph->setLineStyle(QCPGraph::lsNone);
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(text, 2), Qt::NoBrush, 14));
        graph->setData({xOf(*m_current)}, {m_current->loss});
        graph->setSelectable(QCP::stNone);
    }
    m_plot->xAxis->setLabel(m_gbps        ? tr("predicted drafter time (ms, %1 GB/s)").arg(*m_gbps)
                            : m_mebibytes ? tr("streamed per draft step (MiB)")
                                          : tr("streamed per draft step (GiB)"));
    m_plot->yAxis->setLabel(m_lossLabel.isEmpty() ? tr("weighted error E = Σ α·rel_err²") : m_lossLabel);
    m_plot->legend->setVisible(!m_frontier.empty()); // an empty frontier's legend names nothing drawn
    BenchPlot::setEmptyNote(
        *m_plot, nullptr,
        m_frontier.empty() ? tr("No frontier yet: Sweep Schemes measures every legal scheme of every unit.")
                           : QString());
    // Before a sweep nothing is drawn: QCustomPlot's default range would show made-up numbers (-1..6), so
    // the axes keep their labels but no ticks until there is data.
    const bool nothingDrawn = m_frontier.empty() && m_markers.empty() && !m_current;
    for (auto* axis : {m_plot->xAxis, m_plot->yAxis}) {
        axis->setTicks(!nothingDrawn);
        axis->setTickLabels(!nothingDrawn);
    }
    if (nothingDrawn) {
        m_plot->xAxis->setRange(0, 1);
        m_plot->yAxis->setRange(0, 1);
    } else {
        m_plot->rescaleAxes();
        // A little air around the points so that markers at the ends stay visible and clickable; bytes,
        // milliseconds and errors are never negative, so the padding stops at zero unless a point lies on
        // zero itself (the all-BF16 plan's error), which would otherwise sit on the axis, half clipped.
        for (auto* axis : {m_plot->xAxis, m_plot->yAxis}) {
            const auto range = axis->range();
            const double pad = std::max(range.size() * 0.05, 1e-9);
            axis->setRange(range.lower > 0 ? std::max(0.0, range.lower - pad) : range.lower - pad,
                           range.upper + pad);
        }
    }
    BenchPlot::applyPalette(*m_plot);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace spark
