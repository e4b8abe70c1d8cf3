#include "views/shared/jobprogressbar.h"

#include "views/shared/formatting.h"

namespace spark {
namespace {

constexpr int kSteps = 1000;

} // namespace

JobProgressBar::JobProgressBar(QWidget* parent) : QProgressBar(parent)
{
    setRange(0, kSteps);
    setValue(0);
    setMaximumWidth(fontMetrics().averageCharWidth() * 34);
}

void JobProgressBar::start()
{
    m_clock.start();
    setFormat(QStringLiteral("%p%"));
    setValue(0);
}

void JobProgressBar::setFraction(double fraction)
{
    setValue(static_cast<int>(fraction * kSteps));
    // The pace says little before a second or a few percent have passed.
    const double elapsed = m_clock.isValid() ? static_cast<double>(m_clock.elapsed()) / 1000.0 : 0;
    if (fraction > 0.02 && fraction < 1 && elapsed >= 1) {
        setFormat(tr("%p% · about %1 left").arg(formatDuration(elapsed * (1 - fraction) / fraction)));
    } else {
        setFormat(QStringLiteral("%p%"));
    }
}

void JobProgressBar::finish()
{
    m_clock.invalidate();
    setFormat(QStringLiteral("%p%"));
    setValue(kSteps);
}

void JobProgressBar::clear()
{
    m_clock.invalidate();
    setFormat(QStringLiteral("%p%"));
    setValue(0);
}

} // namespace spark
