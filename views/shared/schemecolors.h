#pragma once

#include <QColor>
#include <QString>
#include <QVariant>

namespace spark {

/// @brief The colour of a scheme ("W8A16", "NVFP4A16"): one hue per scheme of weightSchemes(), the same in
/// the Tensors table, the Plan tab and the legend; half transparent so the text keeps its contrast in light
/// and dark palettes. Invalid for "keep"/BF16 and unknown names.
QColor schemeColor(const QString& scheme);

/// @brief schemeColor() as a BackgroundRole value (a null QVariant when the decision has no colour).
QVariant schemeBackground(const QString& decision);

} // namespace spark
