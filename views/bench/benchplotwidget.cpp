#include "views/bench/benchplotwidget.h"

#include "views/bench/benchplotqcp.h"
#include "views/bench/plotroom.h"

#include <QDir>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

namespace spark {

namespace {

// Exports are drawn at a fixed size so files do not depend on the window size; the height follows
// the widget's aspect ratio so the file looks like what the user saw.
constexpr int kExportWidth = 1200;

} // namespace

BenchPlotWidget::BenchPlotWidget(BenchPlotKind kind, QWidget* parent)
    : QWidget(parent), m_kind(kind), m_title(new QLabel(this)), m_export(new QToolButton(this)),
      m_plot(new QCustomPlot(this)), m_lastDirectory(QDir::homePath())
{
    m_title->setText(QStringLiteral("<b>%1</b>").arg(BenchPlot::title(kind).toHtmlEscaped()));
    m_export->setText(tr("Export"));
    m_export->setToolTip(tr("Save this plot as PNG, SVG or PDF."));
    m_export->setPopupMode(QToolButton::InstantPopup);
    m_export->setAutoRaise(true);
    auto* menu = new QMenu(m_export);
    menu->addAction(tr("PNG Image…"), this, [this] { exportWithDialog(QStringLiteral("png")); });
    menu->addAction(tr("SVG Drawing…"), this, [this] { exportWithDialog(QStringLiteral("svg")); });
    menu->addAction(tr("PDF Document…"), this, [this] { exportWithDialog(QStringLiteral("pdf")); });
    m_export->setMenu(menu);
    m_export->setEnabled(false);

    auto* header = new QHBoxLayout;
    header->addWidget(m_title, 1);
    header->addWidget(m_export);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(header);
    layout->addWidget(m_plot, 1);

    setMinimumWidth(kMinimumWidth);
    m_plot->installEventFilter(this);
    keepPlotDataRoom(*m_plot, false);
    // The legend in its own layout row under the axis rect (kept to its minimum height), not inset.
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    showLegend(true);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    // Short line samples and tight margins: the legend takes as little room from the plot as it can (the
    // icon as tall as a line of text, or the text's descenders are clipped).
    m_plot->legend->setIconSize(fontMetrics().averageCharWidth() * 3, fontMetrics().height());
    m_plot->legend->setMargins(QMargins(4, 2, 4, 2));
    m_plot->legend->setVisible(true);
    redraw();
}

void BenchPlotWidget::setReport(std::shared_ptr<const BenchReport> report)
{
    m_report = std::move(report);
    m_export->setEnabled(m_report != nullptr);
    redraw();
}

void BenchPlotWidget::redraw()
{
    if (m_report) {
        BenchPlot::populate(*m_plot, *m_report, m_kind);
    } else {
        m_plot->clearPlottables();
        BenchPlot::setEmptyNote(*m_plot, nullptr, BenchPlot::emptyReason(nullptr, m_kind));
    }
    // populate() adds the guide and error bars to the legend like any plottable: keep data only.
    for (int i = 0; i < m_plot->plottableCount(); ++i) {
        auto* plottable = m_plot->plottable(i);
        if (qobject_cast<QCPErrorBars*>(plottable) || plottable->name().isEmpty()) {
            plottable->removeFromLegend();
        }
    }
    showLegend(m_legendShown && m_plot->legend->itemCount() > 0);
    QFont legendFont = font();
    legendFont.setPointSizeF(legendFont.pointSizeF() * 0.85);
    m_plot->legend->setFont(legendFont); // and its items
    wrapLegend();
    BenchPlot::applyPalette(*m_plot);
    m_plot->replot(QCustomPlot::rpQueuedRefresh);
}

void BenchPlotWidget::setLegendShown(bool shown)
{
    m_legendShown = shown;
    redraw();
}

void BenchPlotWidget::showLegend(bool show)
{
    // An empty legend leaves the layout rather than only hiding: its maximum width (its margins) would still
    // cap the layout column it shares with the axis rect, and the plot would shrink to its minimum width.
    QCPLegend* legend = m_plot->legend;
    QCPLayoutGrid* layout = m_plot->plotLayout();
    const bool inLayout = layout->hasElement(1, 0) && layout->element(1, 0) == legend;
    if (show && !inLayout) {
        layout->addElement(1, 0, legend);
        layout->setRowStretchFactor(1, 0.001);
    } else if (!show && inLayout) {
        layout->take(legend);
        layout->simplify();
    }
    legend->setVisible(show);
}

void BenchPlotWidget::wrapLegend()
{
    spark::wrapLegend(*m_plot->legend, m_plot->width());
}

QString BenchPlotWidget::emptyText() const
{
    const QCPItemText* note = BenchPlot::emptyNote(*m_plot);
    return note && note->visible() ? note->text() : QString();
}

int BenchPlotWidget::dataPlottableCount() const
{
    int count = 0;
    for (int i = 0; i < m_plot->plottableCount(); ++i) {
        auto* plottable = m_plot->plottable(i);
        if (!qobject_cast<QCPErrorBars*>(plottable) && !plottable->name().isEmpty() &&
            plottable->interface1D() && plottable->interface1D()->dataCount() > 0) {
            ++count;
        }
    }
    return count;
}

bool BenchPlotWidget::exportTo(const QString& path, QString* error)
{
    const double aspect = m_plot->width() > 0 ? static_cast<double>(m_plot->height()) / m_plot->width() : 0.6;
    const int height = std::clamp(static_cast<int>(kExportWidth * aspect), kExportWidth / 3, kExportWidth);
    QString problem;
    // A file has no shared key beside it: it carries its own legend.
    const bool addLegend = !m_legendShown && m_plot->legend->itemCount() > 0;
    if (addLegend) {
        showLegend(true);
    }
    const bool saved = BenchPlot::save(*m_plot, path, kExportWidth, height, &problem);
    if (addLegend) {
        showLegend(false);
        m_plot->replot(QCustomPlot::rpQueuedRefresh);
    }
    if (!saved) {
        if (error) {
            *error = tr("Cannot save the plot to %1: %2").arg(QDir::toNativeSeparators(path), problem);
        }
        return false;
    }
    return true;
}

void BenchPlotWidget::exportWithDialog(const QString& suffix)
{
    QString name = BenchPlot::title(m_kind).toLower();
    name.replace(QLatin1Char(' '), QLatin1Char('-'));
    const QString filter = suffix == QLatin1String("svg")   ? tr("SVG drawings (*.svg)")
                           : suffix == QLatin1String("pdf") ? tr("PDF documents (*.pdf)")
                                                            : tr("PNG images (*.png)");
    QString path = QFileDialog::getSaveFileName(
        this, tr("Export Plot"), QDir(m_lastDirectory).filePath(name + QLatin1Char('.') + suffix), filter);
    if (path.isEmpty()) {
        return;
    }
    if (QFileInfo(path).suffix().isEmpty()) {
        path += QLatin1Char('.') + suffix;
    }
    m_lastDirectory = QFileInfo(path).absolutePath();
    QString error;
    if (!exportTo(path, &error)) {
        QMessageBox::warning(this, tr("Export Plot"), error);
    }
}

bool BenchPlotWidget::eventFilter(QObject* watched, QEvent* event)
{
    // Listen on the plot, not on this widget: a parent receives PaletteChange before its children have
    // resolved the new palette, and BenchPlot reads the plot's own palette. The plot gets the event for
    // an application palette switch (dark mode) as well as for a palette set on any ancestor.
    if (watched == m_plot && event->type() == QEvent::PaletteChange) {
        redraw();
    } else if (watched == m_plot && event->type() == QEvent::Resize && m_plot->legend->itemCount() > 0) {
        wrapLegend(); // QCustomPlot replots itself after a resize
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace spark
