#include "views/bench/speedmodelplot.h"

#include "views/bench/benchplot.h"
#include "views/bench/benchplotqcp.h"

#include <algorithm>

namespace spark {
namespace {

QVector<double> keys(std::size_t count)
{
    QVector<double> out;
    for (std::size_t j = 0; j < count; ++j) {
        out << static_cast<double>(j);
    }
    return out;
}

QCPGraph* addCurve(QCustomPlot& plot, const QString& name, const std::vector<double>& rates, const QPen& pen,
                   QCPScatterStyle scatter)
{
    auto* graph = plot.addGraph();
    graph->setName(name);
    graph->setPen(pen);
    graph->setScatterStyle(scatter);
    graph->setData(keys(rates.size()), QVector<double>(rates.begin(), rates.end()), true);
    return graph;
}

} // namespace

void SpeedModelPlot::populate(QCustomPlot& plot, const SpeedModel& model,
                              const std::vector<std::string>& arms, long long promptLen)
{
    plot.clearPlottables();
    int maxK = 1;
    for (const auto& c : model.cells) {
        if (c.promptLen != promptLen) {
            continue;
        }
        maxK = std::max(maxK, c.k);
        // BenchPlot's colour of the arm, so an arm keeps its colour across the tab.
        const QColor color = BenchPlot::armColor(arms, c.arm);
        const QString arm = QString::fromStdString(c.arm);
        addCurve(plot, QStringLiteral("%1 predicted (k* = %2)").arg(arm).arg(c.bestK), c.predictedTokS,
                 QPen(color, 1.6),
                 QCPScatterStyle(QCPScatterStyle::ssCircle, color, plot.palette().color(QPalette::Base), 5));
        auto* measured = plot.addGraph();
        measured->setName(QStringLiteral("%1 measured").arg(arm));
        measured->setLineStyle(QCPGraph::lsNone);
        measured->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 9));
        measured->setData(QVector<double>{static_cast<double>(c.k)}, QVector<double>{c.measuredTokS}, true);
        if (c.quantized) {
            const auto& q = *c.quantized;
            // The measured quantized arm's colour, else one no arm has.
            const QColor qColor = BenchPlot::armColor(arms, q.measured ? q.measured->arm : std::string());
            addCurve(plot, QStringLiteral("quantized draft predicted (k′* = %1)").arg(q.bestK),
                     q.predictedTokSByK, QPen(qColor, 1.6, Qt::DashLine),
                     QCPScatterStyle(QCPScatterStyle::ssTriangle, qColor,
                                     plot.palette().color(QPalette::Base), 6));
            if (q.measured) {
                // Predicted against measured at the measured k: the residual as a vertical segment.
                auto* residual = plot.addGraph();
                residual->setName(QStringLiteral("%1 predicted vs measured (%2 %3 %)")
                                      .arg(QString::fromStdString(q.measured->arm))
                                      .arg(q.measured->residual >= 0 ? QStringLiteral("+") : QString())
                                      .arg(100.0 * q.measured->residual, 0, 'f', 2));
                residual->setPen(QPen(qColor, 2.2, Qt::DotLine));
                residual->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssPlus, qColor, 10));
                residual->setData(QVector<double>{static_cast<double>(c.k), static_cast<double>(c.k)},
                                  QVector<double>{q.predictedTokS, q.measured->measuredTokS}, true);
            }
        }
    }
    QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    plot.xAxis->setTicker(ticker);
    plot.xAxis->setRange(-0.3, maxK + 0.3);
    plot.xAxis->setLabel(QStringLiteral("speculative tokens per verify step j"));
    plot.yAxis->setLabel(QStringLiteral("decode tok/s"));
    bool found = false;
    QCPRange range;
    for (int i = 0; i < plot.plottableCount(); ++i) {
        bool ok = false;
        const auto r = plot.plottable(i)->getValueRange(ok);
        if (ok) {
            range = found ? QCPRange(std::min(range.lower, r.lower), std::max(range.upper, r.upper)) : r;
            found = true;
        }
    }
    if (found) {
        const double pad = std::max(0.08 * range.size(), 0.5);
        plot.yAxis->setRange(std::max(0.0, range.lower - pad), range.upper + pad);
    }
    BenchPlot::applyPalette(plot);
}

} // namespace spark
