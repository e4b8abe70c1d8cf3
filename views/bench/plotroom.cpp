#include "views/bench/plotroom.h"

#include "views/bench/benchplotqcp.h"

#include <algorithm>

namespace spark {
namespace {

/// A plot resized on a hidden page (a tab not on show) can be shown with the viewport of its old size, and
/// draws into that corner of itself: its size is read again when it is shown.
class ViewportOnShow : public QObject
{
  public:
    using QObject::QObject;

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        auto* plot = static_cast<QCustomPlot*>(watched);
        if (event->type() == QEvent::Show && plot->viewport() != plot->rect()) {
            plot->setViewport(plot->rect());
            plot->replot(QCustomPlot::rpQueuedReplot);
        }
        return false;
    }
};

} // namespace

void keepPlotDataRoom(QCustomPlot& plot, bool keepWidth)
{
    plot.installEventFilter(new ViewportOnShow(&plot));
    QObject::connect(&plot, &QCustomPlot::afterLayout, &plot, [&plot, keepWidth] {
        if (plot.viewport() != plot.rect()) {
            return; // laid out for an export at another size
        }
        const QRect data = plot.axisRect()->rect();
        const int height = plot.height() - data.height() + kMinimumPlotDataHeight;
        if (plot.minimumHeight() != height) {
            plot.setMinimumHeight(height); // the next layout gives the data area what it lacked
        }
        const int width = plot.width() - data.width() + kMinimumPlotDataWidth;
        if (keepWidth && plot.minimumWidth() != width) {
            plot.setMinimumWidth(width);
        }
    });
}

void wrapLegend(QCPLegend& legend, int width)
{
    int widest = 1;
    for (int i = 0; i < legend.itemCount(); ++i) {
        // Cells of a wrapped grid's last row can be empty.
        if (const QCPAbstractLegendItem* item = legend.item(i)) {
            widest = std::max(widest, item->minimumOuterSizeHint().width());
        }
    }
    const int available = width - legend.margins().left() - legend.margins().right();
    const int columns = std::max(1, (available + legend.columnSpacing()) / (widest + legend.columnSpacing()));
    if (columns != legend.wrap()) {
        legend.setWrap(columns);
        legend.setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    }
}

} // namespace spark
