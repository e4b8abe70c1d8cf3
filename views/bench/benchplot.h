#pragma once

#include "core/bench/benchreport.h"

#include <QColor>
#include <QString>
#include <vector>

class QCustomPlot;
class QCPAxisRect;
class QCPItemText;

namespace spark {

/// @brief The four benchmark plots: shared by the Benchmarks tab and `sparkulator-cli report
/// --plot`.
enum class BenchPlotKind {
    DecodeSpeed, ///< decode tok/s per prompt length, one line per arm, error bars = sample sd
    Delta,       ///< Δ % of decode tok/s against the baseline, error bars = the CI (n.s. cells hollow)
    Acceptance,  ///< mean acceptance rate per prompt length, grouped bars per arm, error bars = sd
    PerPosition, ///< per-position acceptance curves, one per (arm, prompt length)
};

/// @brief One entry of the key the Benchmarks tab shows once for all its plots: an arm's colour, a prompt
/// length's line style, or the hollow marker of a difference that is not significant.
struct BenchKeyEntry
{
    QString name;
    QColor color;
    Qt::PenStyle line = Qt::SolidLine; ///< Qt::NoPen: a marker without a line
    bool marker = true;                ///< a disc (an arm) or a hollow circle (@c hollow)
    bool hollow = false;
};

/// @brief Draws benchmark reports with QCustomPlot. The plots read the report and own no data, so the
/// GUI can rebuild them on every import and on palette changes (dark mode).
class BenchPlot
{
  public:
    /// @brief A short title, e.g. "Decode speed".
    static QString title(BenchPlotKind kind);

    /// @brief The colour of @p arm's name, the same for as long as the app runs: whatever the baseline, and
    /// however many arms are added later. Names seen for the first time (those of @p arms and @p arm) take
    /// the next colours in alphabetical order.
    static QColor armColor(const std::vector<std::string>& arms, const std::string& arm);

    /// @brief What the colours, line styles and markers of the four plots mean for @p report: every arm,
    /// the prompt lengths when there are several, and "not significant" when a Δ is; @p text colours the
    /// entries that have no colour of their own.
    static std::vector<BenchKeyEntry> keyEntries(const BenchReport& report, const QColor& text);
    /// @brief Why @p kind has nothing to draw for @p report (null: nothing imported), e.g. "No decode speed
    /// in the baseline bf16_draft"; empty when it has data.
    static QString emptyReason(const BenchReport* report, BenchPlotKind kind);
    /// @brief The note populate() leaves in an empty axis rect (its text is emptyReason()), or null.
    static QCPItemText* emptyNote(QCustomPlot& plot, QCPAxisRect* rect = nullptr);

    /// @brief Draws @p kind into @p rect of @p plot (the default axis rect when null), replacing the
    /// plottables that were on that rect. Colors follow @p plot's palette. When nothing can be drawn, a note
    /// in the middle of the rect says why (emptyReason()).
    static void populate(QCustomPlot& plot, const BenchReport& report, BenchPlotKind kind,
                         QCPAxisRect* rect = nullptr);
    /// @brief Shows @p reason as the note of an empty @p rect (empty: removes the note).
    static void setEmptyNote(QCustomPlot& plot, QCPAxisRect* rect, const QString& reason);

    /// @brief Clears @p plot and lays the four plots out in a 2×2 grid with titles and a legend under each
    /// (the CLI's figure).
    static void populateOverview(QCustomPlot& plot, const BenchReport& report);

    /// @brief Colours what populate() does not touch from @p plot's palette: the background, the axis
    /// rects, the default legend and every text element. Called after populate() and on
    /// QEvent::PaletteChange, so a switch to dark mode needs no rebuild of the data.
    static void applyPalette(QCustomPlot& plot);

    /// @brief Writes @p plot to @p path by extension: .png, .jpg/.jpeg, .bmp, .pdf or .svg (QSvgGenerator
    /// with QCustomPlot::toPainter, so the SVG keeps vector lines and text).
    /// @return false with @p error set when the extension is unknown or writing failed.
    static bool save(QCustomPlot& plot, const QString& path, int width, int height, QString* error);
};

} // namespace spark
