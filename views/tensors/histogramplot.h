#pragma once

#include "views/bench/benchplotqcp.h"

namespace spark {

struct FixedHistogram;

/// @brief A bar chart of one of core's FixedHistograms (weights or quantization error in units of the
/// group scale). Copies the counts into its bars when given a histogram and keeps nothing else; colours
/// come from the palette and follow it (dark mode).
class HistogramPlot : public QCustomPlot
{
  public:
    explicit HistogramPlot(const QString& xLabel, QWidget* parent = nullptr);

    /// @brief Shows @p histogram (null: empty plot with a hint).
    void setHistogram(const FixedHistogram* histogram);
    /// @brief Bars currently drawn (tests).
    int barCount() const;

    QSize sizeHint() const override;

  protected:
    void changeEvent(QEvent* event) override;
    /// The plot does not zoom: the wheel goes on to the scrolling detail panel instead of being swallowed
    /// (QCustomPlot accepts every wheel event). With range zoom turned on the plot keeps it.
    void wheelEvent(QWheelEvent* event) override;

  private:
    void applyPalette();

    QCPBars* m_bars;
};

} // namespace spark
