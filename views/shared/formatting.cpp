#include "views/shared/formatting.h"

#include "core/quant/roundingmethod.h"
#include "core/util/textformat.h"
#include "views/shared/localizednumber.h"

#include <QCoreApplication>
#include <QLocale>
#include <algorithm>
#include <cmath>

namespace spark {

QString localizedBytes(std::uint64_t bytes)
{
    if (bytes < 1024) {
        return QStringLiteral("%1 B").arg(bytes);
    }
    const auto scaled = scaleBytes(bytes);
    return QStringLiteral("%1 %2").arg(QLocale().toString(scaled.value, 'f', 2), QLatin1String(scaled.unit));
}

QString formatCount(std::uint64_t count)
{
    return QLocale().toString(static_cast<qulonglong>(count));
}

QString roleText(ModuleRole role)
{
    const auto name = roleName(role);
    return QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
}

QString formatShare(double share)
{
    return QStringLiteral("%1 %").arg(QLocale().toString(share * 100.0, 'f', 2));
}

QString formatRelError(double relError)
{
    return localizedSignificant(relError * 100.0, 3) + QStringLiteral(" %");
}

QString formatDuration(double seconds)
{
    const auto total = static_cast<qint64>(std::llround(std::max(0.0, seconds)));
    if (total < 60) {
        return QCoreApplication::translate("spark::Formatting", "%n s", nullptr, static_cast<int>(total));
    }
    return QCoreApplication::translate("spark::Formatting", "%1 min %2 s")
        .arg(total / 60)
        .arg(total % 60, 2, 10, QLatin1Char('0'));
}

QString schemeText(const WeightScheme& scheme)
{
    return QString::fromLatin1(scheme.name.data(), static_cast<qsizetype>(scheme.name.size()));
}

QString roundingText(const RoundingMethod& method)
{
    return QString::fromLatin1(method.name.data(), static_cast<qsizetype>(method.name.size()));
}

QString schemeAndRoundingText(const WeightScheme& scheme, const RoundingMethod* rounding)
{
    return rounding && !rounding->isRtn()
               ? schemeText(scheme) + QStringLiteral(" · ") + roundingText(*rounding)
               : schemeText(scheme);
}

QString roundingSummary(const RoundingMethod& method)
{
    return QString::fromLatin1(method.summary.data(), static_cast<qsizetype>(method.summary.size()));
}

} // namespace spark
