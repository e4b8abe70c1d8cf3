#include "views/shared/schemecolors.h"

#include "core/quant/weightscheme.h"

#include <QBrush>

namespace spark {

QColor schemeColor(const QString& scheme)
{
    const auto* s = findWeightScheme(scheme.toStdString());
    if (!s || !s->quantizes()) {
        return {};
    }
    // Spread the hues of the quantizing schemes around the wheel in registry order: stable across runs.
    const auto& all = weightSchemes();
    const auto index = static_cast<int>(s - all.data());
    const int hue = (index * 360 / static_cast<int>(all.size() - 1) + 200) % 360;
    return QColor::fromHsv(hue, 170, 230, 110);
}

QVariant schemeBackground(const QString& decision)
{
    const QColor color = schemeColor(decision);
    return color.isValid() ? QVariant(QBrush(color)) : QVariant();
}

} // namespace spark
