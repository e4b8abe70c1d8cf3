#include "views/bench/benchkey.h"

#include <QEvent>
#include <QPainter>
#include <algorithm>

namespace spark {

namespace {

constexpr int kSampleWidth = 22; // the line or marker drawn before a name
constexpr int kGap = 6;          // between a sample and its name
constexpr int kSpacing = 14;     // between entries

} // namespace

BenchKey::BenchKey(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("benchKey"));
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

void BenchKey::setReport(const BenchReport* report)
{
    m_report = report;
    m_entries = report ? BenchPlot::keyEntries(*report, palette().color(QPalette::WindowText))
                       : std::vector<BenchKeyEntry>{};
    setVisible(!m_entries.empty());
    updateGeometry();
    update();
}

int BenchKey::entryWidth(const BenchKeyEntry& entry) const
{
    return kSampleWidth + kGap + fontMetrics().horizontalAdvance(entry.name);
}

std::vector<QPoint> BenchKey::layoutAt(int width) const
{
    std::vector<QPoint> corners;
    const int line = fontMetrics().height() + 2;
    int x = 0;
    int y = 0;
    for (const auto& entry : m_entries) {
        const int w = entryWidth(entry);
        if (x > 0 && x + w > width) {
            x = 0;
            y += line;
        }
        corners.emplace_back(x, y);
        x += w + kSpacing;
    }
    return corners;
}

int BenchKey::heightForWidth(int width) const
{
    const auto corners = layoutAt(width);
    return corners.empty() ? 0 : corners.back().y() + fontMetrics().height() + 2;
}

QSize BenchKey::sizeHint() const
{
    const int w = width() > 0 ? width() : 800;
    return {w, heightForWidth(w)};
}

QSize BenchKey::minimumSizeHint() const
{
    return {0, heightForWidth(width() > 0 ? width() : 800)};
}

void BenchKey::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const auto corners = layoutAt(width());
    const int line = fontMetrics().height();
    const QColor base = palette().color(QPalette::Base);
    for (std::size_t i = 0; i < m_entries.size(); ++i) {
        const auto& entry = m_entries[i];
        const QPoint at = corners[i];
        const int middle = at.y() + line / 2 + 1;
        if (entry.line != Qt::NoPen) {
            painter.setPen(QPen(entry.color, entry.marker ? 2.0 : 1.4, entry.line));
            painter.drawLine(at.x(), middle, at.x() + kSampleWidth, middle);
        }
        if (entry.marker) {
            painter.setPen(QPen(entry.color, 1.4));
            painter.setBrush(entry.hollow ? base : entry.color);
            painter.drawEllipse(QPointF(at.x() + kSampleWidth / 2.0, middle), 3.5, 3.5);
        }
        painter.setPen(palette().color(QPalette::WindowText));
        painter.drawText(QRect(at.x() + kSampleWidth + kGap, at.y() + 1, width(), line),
                         Qt::AlignLeft | Qt::AlignVCenter, entry.name);
    }
}

void BenchKey::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) {
        setReport(m_report); // the prompt lengths' samples are drawn in the text colour
    }
}

} // namespace spark
