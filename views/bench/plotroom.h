#pragma once

class QCPLegend;
class QCustomPlot;

namespace spark {

/// @brief The least room of a plot's data area: below it a plot is unreadable.
inline constexpr int kMinimumPlotDataHeight = 160;
inline constexpr int kMinimumPlotDataWidth = 240;

/// @brief Keeps the data area (axis rect) of @p plot at least kMinimumPlotDataHeight high and, with
/// @p keepWidth, kMinimumPlotDataWidth wide, whatever its axes and legend take: after each layout the
/// widget's minimum size becomes what they take plus that room, so the window gives it or scrolls. A plot
/// shown after a resize on a hidden page takes its new size then.
void keepPlotDataRoom(QCustomPlot& plot, bool keepWidth);

/// @brief Lays @p legend's items out in as many columns as @p width holds.
void wrapLegend(QCPLegend& legend, int width);

} // namespace spark
