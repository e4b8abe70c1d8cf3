#include "views/shared/localizednumber.h"

#include <QLocale>
#include <algorithm>
#include <cmath>

namespace spark {

QString localizedSignificant(double value, int significant)
{
    const QLocale locale;
    if (!std::isfinite(value)) {
        return QStringLiteral("—");
    }
    if (value == 0.0) {
        return locale.toString(0.0, 'f', std::max(0, significant - 1));
    }
    const int magnitude = static_cast<int>(std::floor(std::log10(std::abs(value))));
    if (magnitude >= significant || magnitude < -3) {
        return locale.toString(value, 'g', significant);
    }
    int decimals = std::max(0, significant - 1 - magnitude);
    // 9.9996 rounds up to 10.000: one digit too many.
    const double scale = std::pow(10.0, decimals);
    if (decimals > 0 && std::abs(std::round(value * scale) / scale) >= std::pow(10.0, magnitude + 1)) {
        --decimals;
    }
    return locale.toString(value, 'f', decimals);
}

QString localizedChangePercent(double fraction)
{
    return (fraction > 0 ? QStringLiteral("+") : QString()) + localizedSignificant(100.0 * fraction) +
           QStringLiteral(" %");
}

} // namespace spark
