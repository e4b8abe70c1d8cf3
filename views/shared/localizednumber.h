#pragma once

#include <QString>

namespace spark {

/// @brief @p value with @p significant digits, trailing zeros kept, in the user's locale: "11.80",
/// "100.6" (core's formatSignificant, localized).
QString localizedSignificant(double value, int significant = 4);
/// @brief A fraction as a signed percentage with 4 significant digits: "+8.522 %".
QString localizedChangePercent(double fraction);

} // namespace spark
