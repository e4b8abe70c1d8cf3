#pragma once

#include "views/bench/benchplot.h"

#include <QWidget>
#include <memory>

class QCustomPlot;
class QLabel;
class QToolButton;

namespace spark {

/// @brief One benchmark plot of the Benchmarks tab: a title, a QCustomPlot drawn by BenchPlot from the
/// report it is given (it keeps the shared report, never a copy of the data) and an Export menu (PNG,
/// SVG, PDF). The legend sits under the axis rect, never over the data, or only in exports when a shared
/// key stands for it (setLegendShown()); an empty plot says why. Its data area keeps kMinimumPlotDataHeight
/// pixels (plotroom.h), and the widget kMinimumWidth. Redraws itself on QEvent::PaletteChange so dark mode
/// recolours the plot.
class BenchPlotWidget : public QWidget
{
    Q_OBJECT

  public:
    /// The least width of the widget: four fit a row where each has it.
    static constexpr int kMinimumWidth = 240;

    explicit BenchPlotWidget(BenchPlotKind kind, QWidget* parent = nullptr);

    BenchPlotKind kind() const { return m_kind; }
    QCustomPlot* plot() const { return m_plot; }
    /// @brief Whether the legend is drawn under the plot on screen (default) or left to a shared key;
    /// exports always carry it.
    void setLegendShown(bool shown);
    /// @brief Draws @p report (null: clears the plot).
    void setReport(std::shared_ptr<const BenchReport> report);
    /// @brief Plottables with at least one data point (error bars not counted).
    int dataPlottableCount() const;
    /// @brief The note an empty plot shows in its middle (why there is nothing to draw), or empty.
    QString emptyText() const;

    /// @brief Writes the plot to @p path (.png, .svg or .pdf) at the widget's aspect ratio.
    /// @return false with @p error naming the file and the problem.
    bool exportTo(const QString& path, QString* error);

  public Q_SLOTS:
    /// @brief Asks for a file name and exports (the Export menu).
    void exportWithDialog(const QString& suffix);

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void redraw();
    /// Shows the legend in its layout row under the axis rect, or takes it out of the layout when empty.
    void showLegend(bool show);
    /// Lays the legend items out in as many columns as the plot's width takes.
    void wrapLegend();

    BenchPlotKind m_kind;
    std::shared_ptr<const BenchReport> m_report;
    QLabel* m_title;
    QToolButton* m_export;
    QCustomPlot* m_plot;
    QString m_lastDirectory;
    bool m_legendShown = true;
};

} // namespace spark
