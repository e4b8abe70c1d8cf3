#include "views/bench/benchplot.h"

#include "core/bench/benchreportformat.h"
#include "views/bench/benchplotqcp.h"

#include <QFileInfo>
#include <QSvgGenerator>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

namespace spark {
namespace {

// A dynamic property of a plottable whose legend entry is left out (the key entries stand for it).
constexpr const char* kOutOfLegend = "sparkOutOfLegend";

const char* const kEmptyNoteName = "sparkEmptyNote";

/// The per-position curves of one prompt length share a line style (the colour is the arm's).
constexpr Qt::PenStyle kPromptLengthStyles[4] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine};

QColor armColor(const BenchReport& report, const std::string& arm)
{
    return BenchPlot::armColor(report.arms, arm);
}

QString armName(const std::string& arm)
{
    return QString::fromStdString(arm);
}

/// Prompt lengths are categories (512, 2048, 8192 are not evenly spaced): ticks 1..N with text labels.
void setPromptAxis(QCPAxis* axis, const BenchReport& report)
{
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (std::size_t i = 0; i < report.promptLens.size(); ++i) {
        const auto len = report.promptLens[i];
        ticker->addTick(static_cast<double>(i + 1), len > 0 ? QString::number(len) : QStringLiteral("?"));
    }
    axis->setTicker(ticker);
    axis->setRange(0.4, static_cast<double>(report.promptLens.size()) + 0.6);
    axis->setLabel(QStringLiteral("prompt length (tokens)"));
}

double offsetFor(int index, int count, double width)
{
    return count <= 1 ? 0.0 : (static_cast<double>(index) - (count - 1) / 2.0) * width / count;
}

void styleAxes(QCPAxisRect* rect, const QPalette& palette)
{
    const QColor text = palette.color(QPalette::WindowText);
    for (auto* axis : rect->axes()) {
        axis->setBasePen(QPen(text));
        axis->setTickPen(QPen(text));
        axis->setSubTickPen(QPen(text));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
        axis->grid()->setPen(QPen(palette.color(QPalette::Mid), 0, Qt::DotLine));
    }
}

QCPErrorBars* errorBarsFor(QCPAbstractPlottable* plottable, QCPAxisRect* rect, const QColor& color)
{
    auto* bars = new QCPErrorBars(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    bars->removeFromLegend();
    bars->setDataPlottable(plottable);
    bars->setPen(QPen(color, 1.2));
    bars->setWhiskerWidth(6);
    return bars;
}

void drawDecode(QCustomPlot& plot, QCPAxisRect* rect, const BenchReport& report)
{
    const int arms = static_cast<int>(report.arms.size());
    for (int a = 0; a < arms; ++a) {
        QVector<double> x, y, err;
        for (std::size_t i = 0; i < report.promptLens.size(); ++i) {
            const auto* cell = report.cell(report.arms[static_cast<std::size_t>(a)], report.promptLens[i]);
            const auto* s = cell ? cell->metric(benchmetric::kDecodeTokS) : nullptr;
            if (!s) {
                continue;
            }
            x << static_cast<double>(i + 1) + offsetFor(a, arms, 0.3);
            y << s->mean;
            err << (std::isfinite(s->sd) ? s->sd : 0.0);
        }
        if (x.isEmpty()) {
            continue;
        }
        const auto& arm = report.arms[static_cast<std::size_t>(a)];
        const QColor color = armColor(report, arm);
        auto* graph = plot.addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        graph->setName(armName(arm));
        graph->setPen(QPen(color, 1.6));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, color, color, 6));
        graph->setData(x, y, true);
        errorBarsFor(graph, rect, color)->setData(err);
    }
    rect->axis(QCPAxis::atLeft)->setLabel(QStringLiteral("tok/s (mean ± sd)"));
}

void drawDelta(QCustomPlot& plot, QCPAxisRect* rect, const BenchReport& report)
{
    const int arms = static_cast<int>(report.arms.size());
    auto* zero = plot.addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    zero->setName(QString()); // a guide, not data: kept out of every legend
    zero->removeFromLegend();
    zero->setPen(QPen(plot.palette().color(QPalette::Mid), 1, Qt::DashLine));
    zero->setData(QVector<double>{0.0, static_cast<double>(report.promptLens.size()) + 1},
                  QVector<double>{0.0, 0.0});
    const int candidates = arms - static_cast<int>(report.setups.size());
    int candidate = -1;
    for (int a = 0; a < arms; ++a) {
        const auto& arm = report.arms[static_cast<std::size_t>(a)];
        if (report.isBaseline(arm)) {
            continue;
        }
        ++candidate;
        QVector<double> x, y, minus, plus;
        QVector<double> nsX, nsY;
        for (std::size_t i = 0; i < report.promptLens.size(); ++i) {
            const auto* c = report.comparison(benchmetric::kDecodeTokS, report.promptLens[i], arm);
            if (!c || !std::isfinite(c->welch.deltaPercent)) {
                continue;
            }
            const auto& w = c->welch;
            const double key = static_cast<double>(i + 1) + offsetFor(candidate, candidates, 0.3);
            x << key;
            y << w.deltaPercent;
            minus << (w.valid ? w.deltaPercent - w.deltaPercentCiLow : 0.0);
            plus << (w.valid ? w.deltaPercentCiHigh - w.deltaPercent : 0.0);
            if (!w.significant()) {
                nsX << key;
                nsY << w.deltaPercent;
            }
        }
        if (x.isEmpty()) {
            continue;
        }
        const QColor color = armColor(report, arm);
        auto* graph = plot.addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        graph->setName(armName(arm) + QStringLiteral(" − ") + armName(report.setupOf(arm)->baselineArm));
        graph->setLineStyle(QCPGraph::lsNone);
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 7));
        graph->setData(x, y, true);
        errorBarsFor(graph, rect, color)->setData(minus, plus);
        if (!nsX.isEmpty()) {
            // A hollow marker says "CI contains 0": the difference is not significant.
            auto* ns = plot.addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
            ns->setName(QStringLiteral("not significant"));
            ns->setLineStyle(QCPGraph::lsNone);
            ns->setScatterStyle(
                QCPScatterStyle(QCPScatterStyle::ssCircle, color, plot.palette().color(QPalette::Base), 9));
            ns->setData(nsX, nsY, true);
        }
    }
    rect->axis(QCPAxis::atLeft)
        ->setLabel(QStringLiteral("Δ (%), %1% CI").arg(QString::number(100 * report.confidence)));
}

void drawAcceptance(QCustomPlot& plot, QCPAxisRect* rect, const BenchReport& report)
{
    auto* group = new QCPBarsGroup(&plot);
    const int arms = static_cast<int>(report.arms.size());
    const double width = 0.7 / std::max(1, arms);
    for (int a = 0; a < arms; ++a) {
        QVector<double> x, y, err;
        for (std::size_t i = 0; i < report.promptLens.size(); ++i) {
            const auto* cell = report.cell(report.arms[static_cast<std::size_t>(a)], report.promptLens[i]);
            const auto* s = cell ? cell->metric(benchmetric::kAcceptanceRate) : nullptr;
            if (!s) {
                continue;
            }
            x << static_cast<double>(i + 1);
            y << 100.0 * s->mean;
            err << (std::isfinite(s->sd) ? 100.0 * s->sd : 0.0);
        }
        if (x.isEmpty()) {
            continue;
        }
        const auto& arm = report.arms[static_cast<std::size_t>(a)];
        auto* bars = new QCPBars(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        bars->setName(armName(arm));
        bars->setWidth(width);
        bars->setBarsGroup(group);
        QColor fill = armColor(report, arm);
        bars->setPen(QPen(fill));
        fill.setAlpha(170);
        bars->setBrush(fill);
        bars->setData(x, y, true);
        errorBarsFor(bars, rect, plot.palette().color(QPalette::WindowText))->setData(err);
    }
    rect->axis(QCPAxis::atLeft)->setLabel(QStringLiteral("acceptance (%)"));
    rect->axis(QCPAxis::atLeft)->setRange(0, 100);
}

/// Legend-only graphs (no data): one per arm in its colour, and one per prompt length in its line style
/// when there are several.
void addKeyEntries(QCustomPlot& plot, QCPAxisRect* rect, const BenchReport& report)
{
    for (const auto& key : BenchPlot::keyEntries(report, plot.palette().color(QPalette::WindowText))) {
        if (key.hollow) {
            continue; // the per-position curves have no Δ
        }
        auto* graph = plot.addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        graph->setName(key.name);
        graph->setPen(QPen(key.color, key.marker ? 1.6 : 1.2, key.line));
        graph->addToLegend();
    }
}

void drawPerPosition(QCustomPlot& plot, QCPAxisRect* rect, const BenchReport& report)
{
    const auto& styles = kPromptLengthStyles;
    std::size_t maxPositions = 0;
    int curve = 0;
    for (const auto& cell : report.cells) {
        if (cell.perPositionMean.empty()) {
            continue;
        }
        const QColor color = armColor(report, cell.arm);
        QVector<double> x, y;
        for (std::size_t i = 0; i < cell.perPositionMean.size(); ++i) {
            x << static_cast<double>(i);
            y << 100.0 * cell.perPositionMean[i];
        }
        maxPositions = std::max(maxPositions, cell.perPositionMean.size());
        auto* graph = plot.addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        graph->setName(armName(cell.arm) +
                       (cell.promptLen > 0 ? QStringLiteral(" @ %1").arg(cell.promptLen) : QString()));
        // Same colour per arm; prompt lengths differ by line style.
        const auto lenIndex = static_cast<std::size_t>(
            std::find(report.promptLens.begin(), report.promptLens.end(), cell.promptLen) -
            report.promptLens.begin());
        graph->setPen(QPen(color, 1.6, styles[lenIndex % 4]));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, color, color, 5));
        graph->setData(x, y, true);
        ++curve;
        // An entry per curve ("w4a16_draft @ 8192") took six rows at 1000 pixels; the legend says what
        // colour and line style mean instead.
        graph->removeFromLegend();
        graph->setProperty(kOutOfLegend, true);
    }
    addKeyEntries(plot, rect, report);
    auto* xAxis = rect->axis(QCPAxis::atBottom);
    QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
    ticker->setTickStep(1.0);
    xAxis->setTicker(ticker);
    xAxis->setRange(-0.3, std::max<double>(1.0, static_cast<double>(maxPositions) - 0.7));
    xAxis->setLabel(QStringLiteral("draft position"));
    rect->axis(QCPAxis::atLeft)->setLabel(QStringLiteral("% accepted"));
    rect->axis(QCPAxis::atLeft)->setRange(0, 100);
    Q_UNUSED(curve);
}

// The legend of @p rect in its own layout cell (@p row, @p column), outside the axis rect: it never hides
// data.
void addLegend(QCustomPlot& plot, QCPAxisRect* rect, int row, int column)
{
    auto* legend = new QCPLegend;
    plot.plotLayout()->addElement(row, column, legend);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setWrap(3);
    legend->setLayer(QStringLiteral("legend"));
    legend->setBrush(plot.palette().color(QPalette::Base));
    legend->setTextColor(plot.palette().color(QPalette::WindowText));
    QFont font = plot.font();
    font.setPointSizeF(font.pointSizeF() * 0.85);
    legend->setFont(font);
    for (int i = 0; i < plot.plottableCount(); ++i) {
        auto* p = plot.plottable(i);
        if (p->keyAxis()->axisRect() == rect && !qobject_cast<QCPErrorBars*>(p) && !p->name().isEmpty() &&
            !p->property(kOutOfLegend).toBool()) {
            p->addToLegend(legend);
        }
    }
}

} // namespace

QColor BenchPlot::armColor(const std::vector<std::string>& arms, const std::string& arm)
{
    // Okabe–Ito: distinguishable with the common colour-vision deficiencies, and on dark backgrounds.
    static const QColor colors[] = {QColor(0, 114, 178),   QColor(230, 159, 0),  QColor(0, 158, 115),
                                    QColor(204, 121, 167), QColor(86, 180, 233), QColor(213, 94, 0),
                                    QColor(240, 228, 66)};
    // A colour belongs to an arm's name for as long as the app runs: a name takes the next colour the first
    // time a report shows it (alphabetically among that report's new names), so that arms added later never
    // recolour the others. GUI thread only.
    static std::map<std::string, std::size_t> assigned;
    std::vector<std::string> names = arms;
    names.push_back(arm);
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
        assigned.try_emplace(name, assigned.size());
    }
    return colors[assigned.at(arm) % std::size(colors)];
}

std::vector<BenchKeyEntry> BenchPlot::keyEntries(const BenchReport& report, const QColor& text)
{
    std::vector<BenchKeyEntry> entries;
    for (const auto& arm : report.arms) {
        entries.push_back({armName(arm), armColor(report.arms, arm)});
    }
    if (report.promptLens.size() > 1) {
        for (std::size_t i = 0; i < report.promptLens.size(); ++i) {
            const auto len = report.promptLens[i];
            entries.push_back(
                {len > 0 ? QStringLiteral("%1 tokens").arg(len) : QStringLiteral("unknown length"), text,
                 kPromptLengthStyles[i % 4], false});
        }
    }
    const bool notSignificant =
        std::any_of(report.comparisons.begin(), report.comparisons.end(), [](const BenchComparison& c) {
            return c.metric == benchmetric::kDecodeTokS && c.welch.valid && !c.welch.significant();
        });
    if (notSignificant) {
        entries.push_back({QStringLiteral("not significant (Δ)"), text, Qt::NoPen, true, true});
    }
    return entries;
}

QString BenchPlot::emptyReason(const BenchReport* report, BenchPlotKind kind)
{
    if (!report) {
        return QStringLiteral("Import benchmark results to see this plot.");
    }
    auto hasMetric = [report](const std::string& arm, const char* metric) {
        for (const auto& cell : report->cells) {
            if ((arm.empty() || cell.arm == arm) && cell.metric(metric)) {
                return true;
            }
        }
        return false;
    };
    const QString baseline = QString::fromStdString(report->baselineArm);
    switch (kind) {
    case BenchPlotKind::DecodeSpeed:
        if (!hasMetric({}, benchmetric::kDecodeTokS)) {
            return QStringLiteral("No decode speed in the imported results (a /metrics pair or a log gives "
                                  "acceptance only).");
        }
        return {};
    case BenchPlotKind::Delta:
        if (report->arms.size() < 2) {
            return QStringLiteral("Nothing to compare: import a second arm besides the baseline %1.")
                .arg(baseline);
        }
        for (const auto& c : report->comparisons) {
            if (c.metric == benchmetric::kDecodeTokS && std::isfinite(c.welch.deltaPercent)) {
                return {};
            }
        }
        if (!hasMetric(report->baselineArm, benchmetric::kDecodeTokS)) {
            return QStringLiteral("No decode speed in the baseline %1.").arg(baseline);
        }
        if (report->setups.size() == report->arms.size()) {
            return QStringLiteral("Nothing to compare: every arm ran another setup (target model or k), and "
                                  "arms are compared only within their setup.");
        }
        return QStringLiteral("No arm has decode speed at a prompt length of its setup's baseline.");
    case BenchPlotKind::Acceptance:
        if (!hasMetric({}, benchmetric::kAcceptanceRate)) {
            return QStringLiteral("No acceptance rate in the imported results (spec-decode counters "
                                  "needed).");
        }
        return {};
    case BenchPlotKind::PerPosition:
        for (const auto& cell : report->cells) {
            if (!cell.perPositionMean.empty()) {
                return {};
            }
        }
        return QStringLiteral("No per-position acceptance in the imported results.");
    }
    return {};
}

QCPItemText* BenchPlot::emptyNote(QCustomPlot& plot, QCPAxisRect* rect)
{
    if (!rect) {
        rect = plot.axisRect();
    }
    for (int i = 0; i < plot.itemCount(); ++i) {
        auto* text = qobject_cast<QCPItemText*>(plot.item(i));
        if (text && text->objectName() == QLatin1String(kEmptyNoteName) &&
            text->position->axisRect() == rect) {
            return text;
        }
    }
    return nullptr;
}

void BenchPlot::setEmptyNote(QCustomPlot& plot, QCPAxisRect* rect, const QString& reason)
{
    if (!rect) {
        rect = plot.axisRect();
    }
    QCPItemText* note = emptyNote(plot, rect);
    if (reason.isEmpty()) {
        if (note) {
            plot.removeItem(note);
        }
        return;
    }
    if (!note) {
        note = new QCPItemText(&plot);
        note->setObjectName(QLatin1String(kEmptyNoteName));
        note->setClipAxisRect(rect);
        note->position->setType(QCPItemPosition::ptAxisRectRatio);
        note->position->setAxisRect(rect);
        note->position->setCoords(0.5, 0.5);
        note->setPositionAlignment(Qt::AlignCenter);
        note->setTextAlignment(Qt::AlignCenter);
        note->setPadding(QMargins(8, 4, 8, 4));
    }
    // Long reasons wrap onto a second line rather than run past a narrow plot.
    QString text = reason;
    if (text.size() > 48) {
        const qsizetype space = text.lastIndexOf(QLatin1Char(' '), text.size() / 2 + 8);
        if (space > 0) {
            text[space] = QLatin1Char('\n');
        }
    }
    note->setText(text);
    note->setColor(plot.palette().color(QPalette::WindowText));
}

QString BenchPlot::title(BenchPlotKind kind)
{
    switch (kind) {
    case BenchPlotKind::DecodeSpeed:
        return QStringLiteral("Decode speed");
    case BenchPlotKind::Delta:
        return QStringLiteral("Decode speed vs baseline");
    case BenchPlotKind::Acceptance:
        return QStringLiteral("Acceptance rate");
    case BenchPlotKind::PerPosition:
        return QStringLiteral("Per-position acceptance");
    }
    return {};
}

void BenchPlot::populate(QCustomPlot& plot, const BenchReport& report, BenchPlotKind kind, QCPAxisRect* rect)
{
    if (!rect) {
        rect = plot.axisRect();
    }
    for (int i = plot.plottableCount() - 1; i >= 0; --i) {
        if (plot.plottable(i)->keyAxis()->axisRect() == rect) {
            plot.removePlottable(i);
        }
    }
    styleAxes(rect, plot.palette());
    if (kind != BenchPlotKind::PerPosition) {
        setPromptAxis(rect->axis(QCPAxis::atBottom), report);
    }
    switch (kind) {
    case BenchPlotKind::DecodeSpeed:
        drawDecode(plot, rect, report);
        break;
    case BenchPlotKind::Delta:
        drawDelta(plot, rect, report);
        break;
    case BenchPlotKind::Acceptance:
        drawAcceptance(plot, rect, report);
        break;
    case BenchPlotKind::PerPosition:
        drawPerPosition(plot, rect, report);
        break;
    }
    setEmptyNote(plot, rect, emptyReason(&report, kind));
    if (kind == BenchPlotKind::DecodeSpeed || kind == BenchPlotKind::Delta) {
        // Rescale the value axis only: the key axis is categorical and already set.
        bool found = false;
        QCPRange range;
        for (int i = 0; i < plot.plottableCount(); ++i) {
            auto* p = plot.plottable(i);
            if (p->keyAxis()->axisRect() != rect) {
                continue;
            }
            bool ok = false;
            const auto r = p->getValueRange(ok, QCP::sdBoth, QCPRange());
            if (ok) {
                range = found ? QCPRange(std::min(range.lower, r.lower), std::max(range.upper, r.upper)) : r;
                found = true;
            }
        }
        if (found) {
            const double pad = std::max(0.1 * range.size(), 0.5);
            rect->axis(QCPAxis::atLeft)->setRange(range.lower - pad, range.upper + pad);
        }
    }
}

void BenchPlot::populateOverview(QCustomPlot& plot, const BenchReport& report)
{
    plot.clearPlottables();
    plot.clearItems();
    plot.plotLayout()->clear();
    plot.legend = nullptr;
    // The first QCPLegend added to a layout becomes plot.legend; auto-adding would then put every
    // plottable of all four rects into that one legend. Each rect gets its own legend instead.
    plot.setAutoAddPlottableToLegend(false);
    const BenchPlotKind kinds[] = {BenchPlotKind::DecodeSpeed, BenchPlotKind::Delta,
                                   BenchPlotKind::Acceptance, BenchPlotKind::PerPosition};
    // Per plot three rows: the title, the axis rect, its legend (kept to its minimum height).
    for (int i = 0; i < 4; ++i) {
        const int row = (i / 2) * 3;
        const int col = i % 2;
        auto* heading = new QCPTextElement(&plot, BenchPlot::title(kinds[i]),
                                           QFont(plot.font().family(), 11, QFont::Bold));
        heading->setTextColor(plot.palette().color(QPalette::WindowText));
        plot.plotLayout()->addElement(row, col, heading);
        auto* rect = new QCPAxisRect(&plot);
        plot.plotLayout()->addElement(row + 1, col, rect);
        populate(plot, report, kinds[i], rect);
        addLegend(plot, rect, row + 2, col);
    }
    for (const int legendRow : {2, 5}) {
        plot.plotLayout()->setRowStretchFactor(legendRow, 0.001);
    }
    plot.setBackground(plot.palette().color(QPalette::Base));
}

void BenchPlot::applyPalette(QCustomPlot& plot)
{
    const QPalette palette = plot.palette();
    const QColor text = palette.color(QPalette::WindowText);
    const QColor base = palette.color(QPalette::Base);
    plot.setBackground(base);
    for (auto* rect : plot.axisRects()) {
        rect->setBackground(base);
        styleAxes(rect, palette);
    }
    for (int i = 0; i < plot.layerCount(); ++i) {
        for (auto* layerable : plot.layer(i)->children()) {
            if (auto* legend = qobject_cast<QCPLegend*>(layerable)) {
                legend->setBrush(base);
                legend->setBorderPen(QPen(palette.color(QPalette::Mid)));
                legend->setTextColor(text);
            } else if (auto* heading = qobject_cast<QCPTextElement*>(layerable)) {
                heading->setTextColor(text);
            } else if (auto* note = qobject_cast<QCPItemText*>(layerable)) {
                note->setColor(text);
            }
        }
    }
    if (plot.legend) {
        plot.legend->setBrush(base);
        plot.legend->setBorderPen(QPen(palette.color(QPalette::Mid)));
        plot.legend->setTextColor(text);
    }
}

namespace {

bool saveSvg(QCustomPlot& plot, const QString& path, int width, int height)
{
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(QSize(width, height));
    svg.setViewBox(QRect(0, 0, width, height));
    svg.setTitle(QStringLiteral("Sparkulator benchmark plot"));
    QCPPainter painter;
    if (!painter.begin(&svg)) {
        return false;
    }
    plot.toPainter(&painter, width, height);
    painter.end();
    const QFileInfo written(path);
    return written.exists() && written.size() > 0;
}

} // namespace

bool BenchPlot::save(QCustomPlot& plot, const QString& path, int width, int height, QString* error)
{
    const auto suffix = QFileInfo(path).suffix().toLower();
    bool ok = false;
    if (suffix == QLatin1String("svg")) {
        ok = saveSvg(plot, path, width, height);
    } else if (suffix == QLatin1String("png")) {
        ok = plot.savePng(path, width, height);
    } else if (suffix == QLatin1String("jpg") || suffix == QLatin1String("jpeg")) {
        ok = plot.saveJpg(path, width, height);
    } else if (suffix == QLatin1String("bmp")) {
        ok = plot.saveBmp(path, width, height);
    } else if (suffix == QLatin1String("pdf")) {
        ok = plot.savePdf(path, width, height);
    } else {
        if (error) {
            *error = QStringLiteral("unsupported plot format '.%1' (use .png, .svg or .pdf)").arg(suffix);
        }
        return false;
    }
    if (!ok && error) {
        *error = QStringLiteral("cannot write %1").arg(path);
    }
    return ok;
}

} // namespace spark
