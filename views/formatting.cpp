#include "views/formatting.h"

#include <QLocale>
#include <array>

namespace spark {

QString formatBytes(std::uint64_t bytes)
{
    static constexpr std::array<const char*, 5> units{"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (bytes < 1024) {
        return QStringLiteral("%1 B").arg(bytes);
    }
    double value = static_cast<double>(bytes);
    std::size_t unit = 0;
    value /= 1024.0;
    while (value >= 1024.0 && unit + 1 < units.size()) {
        value /= 1024.0;
        ++unit;
    }
    return QStringLiteral("%1 %2").arg(QLocale().toString(value, 'f', 2), QLatin1String(units[unit]));
}

QString formatCount(std::uint64_t count)
{
    return QLocale().toString(static_cast<qulonglong>(count));
}

QString formatShare(double share)
{
    return QStringLiteral("%1 %").arg(QLocale().toString(share * 100.0, 'f', 2));
}

} // namespace spark
