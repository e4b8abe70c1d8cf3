#pragma once

#include "core/audit/comparer.h"

#include <QWidget>
#include <memory>

class QCustomPlot;

namespace spark {

/// @brief Per-module error plot of a comparison: one bar of rel. error per quantized module, bit-exact
/// ones in the palette's highlight colour, the others in red. Reads the shared report, never copies it;
/// recolours on QEvent::PaletteChange.
class ComparePlot : public QWidget
{
    Q_OBJECT

  public:
    explicit ComparePlot(QWidget* parent = nullptr);

    void setReport(std::shared_ptr<const CompareReport> report);
    QCustomPlot* plot() const { return m_plot; }
    /// Bars drawn (quantized modules with a finite error).
    int barCount() const { return m_bars; }

  protected:
    void changeEvent(QEvent* event) override;

  private:
    void redraw();

    QCustomPlot* m_plot;
    std::shared_ptr<const CompareReport> m_report;
    int m_bars = 0;
};

} // namespace spark
