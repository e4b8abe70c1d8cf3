#include "views/shared/theme.h"

#include <QApplication>
#include <QPainter>
#include <QProxyStyle>
#include <QSettings>
#include <QStyleFactory>
#include <QStyleOption>
#include <cmath>
#include <memory>

namespace spark {

namespace {

const char* const kSettingsKey = "view/theme";

Theme g_current = Theme::System;

// What the application had before the first applyTheme(): System goes back to it.
struct Startup
{
    bool captured = false;
    QString styleName;
};

Startup& startup()
{
    static Startup state;
    return state;
}

QColor blend(const QColor& a, const QColor& b, double weightOfA)
{
    const double w = weightOfA;
    return QColor::fromRgbF(static_cast<float>(a.redF() * w + b.redF() * (1 - w)),
                            static_cast<float>(a.greenF() * w + b.greenF() * (1 - w)),
                            static_cast<float>(a.blueF() * w + b.blueF() * (1 - w)));
}

double luminance(const QColor& color)
{
    auto channel = [](double c) { return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); };
    const QColor rgb = color.toRgb();
    return 0.2126 * channel(rgb.redF()) + 0.7152 * channel(rgb.greenF()) + 0.0722 * channel(rgb.blueF());
}

// Fusion outlines check boxes with the window colour made darker: on a dark palette the outline all but
// vanishes, and on the light one it stays near 2:1. An unchecked box then looks like no box at all. This
// draws the frame again in the palette's muted text colour (well over 3:1, the WCAG minimum for controls).
class ContrastStyle : public QProxyStyle
{
  public:
    explicit ContrastStyle(QStyle* base) : QProxyStyle(base) {}

    void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                       const QWidget* widget) const override
    {
        QProxyStyle::drawPrimitive(element, option, painter, widget);
        if ((element != PE_IndicatorCheckBox && element != PE_IndicatorItemViewItemCheck) ||
            !option->state.testFlag(State_Enabled)) {
            return;
        }
        painter->save();
        painter->setRenderHint(QPainter::Antialiasing, false);
        painter->setBrush(Qt::NoBrush);
        painter->setPen(QPen(mutedTextColor(option->palette), 1));
        const int size = std::min(option->rect.width(), option->rect.height());
        QRect box(0, 0, size, size);
        box.moveCenter(option->rect.center());
        painter->drawRect(box.adjusted(0, 0, -1, -1));
        painter->restore();
    }
};

QStyle* fusion()
{
    return new ContrastStyle(QStyleFactory::create(QStringLiteral("Fusion")));
}

} // namespace

QString themeName(Theme theme)
{
    switch (theme) {
    case Theme::Light:
        return QStringLiteral("light");
    case Theme::Dark:
        return QStringLiteral("dark");
    case Theme::System:
        break;
    }
    return QStringLiteral("system");
}

std::optional<Theme> themeFromName(const QString& name)
{
    for (const Theme theme : {Theme::System, Theme::Light, Theme::Dark}) {
        if (name.compare(themeName(theme), Qt::CaseInsensitive) == 0) {
            return theme;
        }
    }
    return std::nullopt;
}

bool isDarkPalette(const QPalette& palette)
{
    return palette.color(QPalette::Base).lightness() < palette.color(QPalette::Text).lightness();
}

QColor mutedTextColor(const QPalette& palette)
{
    // 60 % text: clearly secondary, yet 5:1 or more against Base on both palettes here.
    return blend(palette.color(QPalette::Active, QPalette::Text),
                 palette.color(QPalette::Active, QPalette::Base), 0.6);
}

double contrastRatio(const QColor& a, const QColor& b)
{
    const double la = luminance(a);
    const double lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QPalette lightPalette()
{
    std::unique_ptr<QStyle> style(QStyleFactory::create(QStringLiteral("Fusion")));
    QPalette palette = style ? style->standardPalette() : QPalette();
    palette.setColor(QPalette::PlaceholderText, mutedTextColor(palette));
    return palette;
}

QPalette darkPalette()
{
    const QColor window(43, 43, 46);
    const QColor base(30, 30, 32);
    const QColor text(230, 230, 230);
    const QColor disabledText(128, 128, 132);
    QPalette palette;
    for (const auto group : {QPalette::Active, QPalette::Inactive, QPalette::Disabled}) {
        const bool disabled = group == QPalette::Disabled;
        palette.setColor(group, QPalette::Window, window);
        palette.setColor(group, QPalette::WindowText, disabled ? disabledText : text);
        palette.setColor(group, QPalette::Base, base);
        palette.setColor(group, QPalette::AlternateBase, QColor(38, 38, 41));
        palette.setColor(group, QPalette::ToolTipBase, QColor(60, 60, 64));
        palette.setColor(group, QPalette::ToolTipText, text);
        palette.setColor(group, QPalette::Text, disabled ? disabledText : text);
        palette.setColor(group, QPalette::Button, QColor(53, 53, 57));
        palette.setColor(group, QPalette::ButtonText, disabled ? disabledText : text);
        palette.setColor(group, QPalette::BrightText, QColor(255, 110, 110));
        palette.setColor(group, QPalette::Light, QColor(80, 80, 84));
        palette.setColor(group, QPalette::Midlight, QColor(64, 64, 68));
        palette.setColor(group, QPalette::Mid, QColor(90, 90, 94));
        palette.setColor(group, QPalette::Dark, QColor(22, 22, 24));
        palette.setColor(group, QPalette::Shadow, QColor(0, 0, 0));
        palette.setColor(group, QPalette::Highlight, disabled ? QColor(70, 70, 74) : QColor(42, 110, 200));
        palette.setColor(group, QPalette::HighlightedText, disabled ? disabledText : QColor(255, 255, 255));
        palette.setColor(group, QPalette::Link, QColor(100, 170, 255));
        palette.setColor(group, QPalette::LinkVisited, QColor(190, 150, 255));
    }
    for (const auto group : {QPalette::Active, QPalette::Inactive, QPalette::Disabled}) {
        palette.setColor(group, QPalette::PlaceholderText, mutedTextColor(palette));
    }
    return palette;
}

void applyTheme(Theme theme)
{
    auto& state = startup();
    if (!state.captured) {
        state.captured = true;
        state.styleName = QApplication::style() ? QApplication::style()->name() : QString();
    }
    switch (theme) {
    case Theme::System:
        if (QStyle* style = QStyleFactory::create(state.styleName)) {
            QApplication::setStyle(style);
        }
        // An empty palette resolves to the style's and platform's own again.
        QApplication::setPalette(QPalette());
        break;
    case Theme::Light:
        QApplication::setStyle(fusion());
        QApplication::setPalette(lightPalette());
        break;
    case Theme::Dark:
        QApplication::setStyle(fusion());
        QApplication::setPalette(darkPalette());
        break;
    }
    g_current = theme;
}

Theme currentTheme()
{
    return g_current;
}

Theme storedTheme()
{
    return themeFromName(QSettings().value(QLatin1String(kSettingsKey)).toString()).value_or(Theme::System);
}

void storeTheme(Theme theme)
{
    QSettings().setValue(QLatin1String(kSettingsKey), themeName(theme));
}

} // namespace spark
