#pragma once

#include <QColor>
#include <QPalette>
#include <QString>
#include <optional>

namespace spark {

/// @brief The View ▸ Theme choice. System leaves style and palette to the desktop; Light and Dark use
/// Fusion with a full palette of their own (every role, the Disabled group and PlaceholderText included).
enum class Theme { System, Light, Dark };

/// @brief "system", "light", "dark" (settings and the --theme option).
QString themeName(Theme theme);
/// @brief The theme named @p name (any case), or nullopt.
std::optional<Theme> themeFromName(const QString& name);

/// @brief Fusion's light palette with a readable PlaceholderText.
QPalette lightPalette();
/// @brief A dark palette for Fusion: every role of the three groups set, PlaceholderText muted but readable.
QPalette darkPalette();

/// @brief Applies @p theme to the running application (style and palette); widgets follow through their
/// PaletteChange events. System restores the style and palette the application started with.
void applyTheme(Theme theme);
/// @brief The theme applied last (System before any call).
Theme currentTheme();

/// @brief The theme stored in the user's settings ("view/theme"); System when none or unknown.
Theme storedTheme();
void storeTheme(Theme theme);

/// @brief True when @p palette draws light text on a dark base.
bool isDarkPalette(const QPalette& palette);
/// @brief A secondary text colour derived from the palette: Text blended towards Base, so it reads as
/// muted yet keeps a contrast ratio well above 3:1 on Base and Window, light or dark. Use it instead of a
/// hard-coded grey.
QColor mutedTextColor(const QPalette& palette);
/// @brief The WCAG 2 contrast ratio of two opaque colours, 1 (same luminance) to 21 (black on white).
double contrastRatio(const QColor& a, const QColor& b);

} // namespace spark
