#pragma once

#include "core/forward/acceptance.h"

#include <QString>
#include <QWidget>

class QCPBarsGroup;
class QCustomPlot;

namespace spark {

/// @brief Per-position acceptance a_i of the BF16 and the quantized draft as grouped bars with their 95%
/// intervals as error bars (QCustomPlot). Draws the summary it is given and keeps a copy only to redraw on
/// palette change (dark mode).
class AcceptancePlot : public QWidget
{
    Q_OBJECT

  public:
    explicit AcceptancePlot(QWidget* parent = nullptr);

    /// @brief Draws @p summary; @p quantName labels the quantized bars.
    void setSummary(const AcceptanceSummary& summary, const QString& quantName);
    void clear();
    QCustomPlot* plot() const { return m_plot; }
    /// @brief Writes the plot to .png, .svg or .pdf (false with @p error otherwise).
    bool save(const QString& path, QString* error = nullptr);

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void rebuild();
    void showLegend(bool show);

    QCustomPlot* m_plot;
    QCPBarsGroup* m_group;
    AcceptanceSummary m_summary;
    QString m_quantName;
};

} // namespace spark
