#pragma once

#include "core/plan/budgetallocator.h"

#include <QString>
#include <QWidget>
#include <optional>
#include <vector>

class QCustomPlot;

namespace spark {

/// @brief The allocator's Pareto frontier drawn with QCustomPlot: weighted error E against streamed bytes per
/// draft step (GiB, or MiB for a draft under 1 GiB), or against predicted drafter time when a bandwidth is
/// set (time = bytes / bandwidth, the plan's model), with named plans (presets) and the current plan as
/// points on it. Clicking a frontier point emits pointClicked. Reads the points it is given, owns no other
/// data; recolours on palette change.
class FrontierPlot : public QWidget
{
    Q_OBJECT

  public:
    /// @brief A named plan drawn as a point.
    struct Marker
    {
        QString label;
        FrontierPoint point;
    };

    explicit FrontierPlot(QWidget* parent = nullptr);

    /// @brief Replaces the frontier and the named points.
    void setFrontier(const std::vector<FrontierPoint>& frontier, const std::vector<Marker>& markers);
    /// @brief Marks the plan in use (nullopt: none is on the sweep's units).
    void setCurrent(const std::optional<FrontierPoint>& current);
    /// @brief What the y axis measures (the allocator's loss); empty: weighted error.
    void setLossLabel(const QString& label);
    /// @brief Draws the x axis as predicted drafter ms at @p gbps (nullopt: streamed bytes).
    void setBandwidth(std::optional<double> gbps);
    /// @brief The x value a point is drawn at (GiB, MiB or ms).
    double xOf(const FrontierPoint& point) const;

    QCustomPlot* plot() const { return m_plot; }
    int frontierPointCount() const { return static_cast<int>(m_frontier.size()); }
    const std::vector<Marker>& markers() const { return m_markers; }
    /// @brief Writes the plot to .png, .svg or .pdf (false with @p error otherwise).
    bool save(const QString& path, QString* error = nullptr);

  Q_SIGNALS:
    /// The user clicked frontier point @p index.
    void pointClicked(int index);

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void rebuild();

    QCustomPlot* m_plot;
    std::vector<FrontierPoint> m_frontier;
    std::vector<Marker> m_markers;
    std::optional<FrontierPoint> m_current;
    std::optional<double> m_gbps;
    QString m_lossLabel;
    bool m_mebibytes = false; ///< streamed bytes in MiB: every point is under 1 GiB
};

} // namespace spark
