// Themes and contrast: View ▸ Theme (System, Light, Dark; exclusive, remembered, live),
// `--screenshot --theme`, and in the light and the dark theme a readable placeholder, preset plan entries
// and unchecked check boxes, measured on rendered pixels (WCAG contrast ratio against the background).
#include "guitesthelpers.h"
#include "views/plan/plancontroller.h"
#include "views/plan/planentryeditor.h"
#include "views/plan/planentrylistmodel.h"
#include "views/plan/plantab.h"
#include "views/shared/theme.h"
#include "views/tensors/tensorcolumns.h"
#include "views/tensors/tensorsview.h"
#include "views/window/mainwindow.h"
#include "views/window/screenshot.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QHash>
#include <QImage>
#include <QLineEdit>
#include <QProxyStyle>
#include <QSettings>
#include <QStandardPaths>
#include <QStyle>
#include <QStyleOptionButton>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>

using namespace spark;
using namespace spark::test;
using namespace Qt::StringLiterals;

namespace {

// The colour most pixels of @p image have: its background.
QColor dominantColor(const QImage& image)
{
    QHash<QRgb, int> counts;
    for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < image.width(); ++x) {
            ++counts[image.pixel(x, y) | 0xff000000u];
        }
    }
    QRgb best = 0;
    int most = -1;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it) {
        if (it.value() > most) {
            most = it.value();
            best = it.key();
        }
    }
    return QColor::fromRgb(best);
}

// The strongest contrast of any pixel of @p image with @p background: what the text (or line) drawn on it
// reaches at its core, anti-aliased edges aside.
double measuredContrast(const QImage& image, const QColor& background)
{
    double best = 1.0;
    for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < image.width(); ++x) {
            best = std::max(best, contrastRatio(QColor::fromRgb(image.pixel(x, y)), background));
        }
    }
    return best;
}

QImage grabbed(QWidget* widget, const QRect& rect)
{
    return widget->grab(rect).toImage().convertToFormat(QImage::Format_RGB32);
}

QString describe(double ratio, const QColor& background)
{
    return u"contrast %1:1 on %2"_s.arg(ratio, 0, 'f', 2).arg(background.name());
}

} // namespace

class TestGuiTheme : public QObject
{
    Q_OBJECT

  private:
    QTemporaryDir m_dir;
    QString m_draft;

  private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(u"SparkulatorTest"_s);
        QCoreApplication::setApplicationName(u"tst_gui_theme"_s);
        QSettings().clear();
        QVERIFY(m_dir.isValid());
        m_draft = writeTinyDemo(m_dir, "glm-dspark", u"glm"_s);
    }

    void cleanup() { applyTheme(Theme::System); }

    void names()
    {
        for (const Theme theme : {Theme::System, Theme::Light, Theme::Dark}) {
            QCOMPARE(themeFromName(themeName(theme)), std::optional<Theme>(theme));
        }
        QCOMPARE(themeFromName(u"DARK"_s), std::optional<Theme>(Theme::Dark));
        QVERIFY(!themeFromName(u"sepia"_s));
    }

    void mutedColourReads()
    {
        for (const QPalette& palette : {lightPalette(), darkPalette()}) {
            const QColor muted = mutedTextColor(palette);
            const QColor base = palette.color(QPalette::Base);
            QVERIFY2(contrastRatio(muted, base) >= 4.5,
                     qPrintable(describe(contrastRatio(muted, base), base)));
            QVERIFY(contrastRatio(muted, palette.color(QPalette::Window)) >= 3.0);
            // Muted: less contrast than the text itself.
            QVERIFY(contrastRatio(muted, base) < contrastRatio(palette.color(QPalette::Text), base));
            QCOMPARE(palette.color(QPalette::PlaceholderText), muted);
        }
        QVERIFY(isDarkPalette(darkPalette()));
        QVERIFY(!isDarkPalette(lightPalette()));
        QCOMPARE(contrastRatio(Qt::black, Qt::white), 21.0);
        QCOMPARE(contrastRatio(Qt::gray, Qt::gray), 1.0);
    }

    void readableContrast_data()
    {
        QTest::addColumn<int>("theme");
        QTest::addRow("dark") << int(Theme::Dark);
        QTest::addRow("light") << int(Theme::Light);
    }

    // Rendered in the theme: every measured element reaches 3:1 against what it is drawn on (the WCAG
    // minimum for large text and for the parts of a control).
    void readableContrast()
    {
        QFETCH(int, theme);
        applyTheme(static_cast<Theme>(theme));
        MainWindow window(quiet());
        window.resize(1200, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(openAndWait(window, m_draft));
        QApplication::processEvents();
        TensorsView* tensors = window.tensorsView();

        // The filter's placeholder text ("Filter tensors by name").
        auto* filter = tensors->findChild<QLineEdit*>(u"tensorFilter"_s);
        QVERIFY(filter && filter->text().isEmpty() && !filter->placeholderText().isEmpty());
        window.setFocus(); // the placeholder shows without focus too; keep the focus frame out of it
        {
            const QImage image = grabbed(filter, filter->rect().adjusted(4, 4, -4, -4));
            const QColor background = dominantColor(image);
            const double ratio = measuredContrast(image, background);
            QVERIFY2(ratio >= 3.0, qPrintable(u"placeholder: "_s + describe(ratio, background)));
        }

        // An unchecked check box (Regex): the frame of its box against the window.
        QCheckBox* regex = nullptr;
        for (auto* box : tensors->findChildren<QCheckBox*>()) {
            if (box->text().contains(u"Rege"_s)) {
                regex = box;
            }
        }
        QVERIFY(regex && !regex->isChecked());
        {
            QStyleOptionButton option;
            option.initFrom(regex);
            option.text = regex->text();
            const QRect box = regex->style()->subElementRect(QStyle::SE_CheckBoxIndicator, &option, regex);
            QVERIFY(box.isValid());
            QWidget* parent = regex->parentWidget();
            const QRect around = box.translated(regex->pos()).adjusted(-3, -3, 3, 3);
            const QColor background = dominantColor(grabbed(parent, around.adjusted(-6, 0, 6, 0)));
            const double ratio = measuredContrast(grabbed(parent, around), background);
            QVERIFY2(ratio >= 3.0, qPrintable(u"unchecked check box: "_s + describe(ratio, background)));
        }

        // An unchecked decision in the table (a module the user keeps BF16): its check box against the cell.
        // (What the preset keeps is greyed, as disabled controls are, and not the user's to toggle.)
        QString message;
        QVERIFY2(window.planController()->toggleModule(u"layers.0.mlp.down_proj"_s, &message),
                 qPrintable(message));
        window.planController()->recomputeNow();
        QVERIFY(tensors->selectTensor(u"layers.0.mlp.down_proj.weight"_s));
        QTreeView* view = tensors->treeView();
        QModelIndex kept;
        const QModelIndex layer0 = view->currentIndex().parent().parent();
        for (int row = 0; row < view->model()->rowCount(layer0) && !kept.isValid(); ++row) {
            const QModelIndex cell = view->model()->index(row, TensorColumns::Decision, layer0);
            if (cell.data(Qt::CheckStateRole).toInt() == Qt::Unchecked &&
                cell.data(Qt::CheckStateRole).isValid() && (cell.flags() & Qt::ItemIsEnabled)) {
                kept = cell;
            }
        }
        QVERIFY(kept.isValid());
        view->scrollTo(kept);
        QApplication::processEvents();
        {
            const QRect cell = view->visualRect(kept);
            QVERIFY(view->viewport()->rect().contains(cell));
            // The check box comes first in the cell, the text after it.
            const int margin = view->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, view) + 1;
            const int size = view->style()->pixelMetric(QStyle::PM_IndicatorWidth, nullptr, view);
            const QRect indicator(cell.left(), cell.top(), size + 3 * margin, cell.height());
            const QImage row = grabbed(view->viewport(), cell);
            const QColor background = QColor::fromRgb(row.pixel(row.width() - 2, row.height() / 2));
            const double ratio = measuredContrast(grabbed(view->viewport(), indicator), background);
            QVERIFY2(ratio >= 3.0, qPrintable(u"unchecked decision: "_s + describe(ratio, background)));
        }

        // A preset entry of the plan (read-only, drawn muted).
        QVERIFY(window.showTab(u"plan"_s));
        QApplication::processEvents();
        auto* targets = window.planTab()->rulesEditor()->findChild<QTableView*>(u"targetEntries"_s);
        QVERIFY(targets);
        const QModelIndex preset = targets->model()->index(0, PlanEntryListModel::Entry);
        QVERIFY(preset.data(PlanEntryListModel::UserIndexRole).toInt() < 0);
        targets->clearSelection();
        targets->setCurrentIndex(QModelIndex());
        QApplication::processEvents();
        {
            const QImage image =
                grabbed(targets->viewport(), targets->visualRect(preset).adjusted(1, 1, -1, -1));
            const QColor background = dominantColor(image);
            const double ratio = measuredContrast(image, background);
            QVERIFY2(ratio >= 3.0, qPrintable(u"preset entry: "_s + describe(ratio, background)));
        }
    }

    // A dark palette on one widget, not the application: preset entries follow the view's palette.
    void presetEntriesFollowTheViewsPalette()
    {
        MainWindow window(quiet());
        window.resize(1200, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(openAndWait(window, m_draft));
        QVERIFY(window.showTab(u"plan"_s));
        window.planTab()->setPalette(darkPalette());
        QApplication::processEvents();
        auto* targets = window.planTab()->rulesEditor()->findChild<QTableView*>(u"targetEntries"_s);
        QVERIFY(targets);
        const QModelIndex preset = targets->model()->index(0, PlanEntryListModel::Entry);
        targets->clearSelection();
        targets->setCurrentIndex(QModelIndex());
        QApplication::processEvents();
        const QImage image = grabbed(targets->viewport(), targets->visualRect(preset).adjusted(1, 1, -1, -1));
        const QColor background = dominantColor(image);
        QCOMPARE(background, darkPalette().color(QPalette::Base));
        const double ratio = measuredContrast(image, background);
        QVERIFY2(ratio >= 3.0, qPrintable(describe(ratio, background)));
    }

    void themeMenu()
    {
        QSettings().remove(u"view/theme"_s);
        MainWindow window; // persists: the choice goes to the (test) settings
        QAction* system = window.findChild<QAction*>(u"theme-system"_s);
        QAction* light = window.findChild<QAction*>(u"theme-light"_s);
        QAction* dark = window.findChild<QAction*>(u"theme-dark"_s);
        QVERIFY(system && light && dark);
        QVERIFY(system->isChecked());
        QVERIFY(system->actionGroup() && system->actionGroup()->isExclusive());
        QCOMPARE(dark->actionGroup(), system->actionGroup());

        const QColor lightWindow = qApp->palette().color(QPalette::Window);
        dark->trigger();
        QVERIFY(dark->isChecked() && !system->isChecked());
        QCOMPARE(currentTheme(), Theme::Dark);
        QVERIFY(isDarkPalette(qApp->palette()));
        QTRY_COMPARE(window.palette().color(QPalette::Window), darkPalette().color(QPalette::Window)); // live
        QCOMPARE(QSettings().value(u"view/theme"_s).toString(), u"dark"_s);
        QCOMPARE(storedTheme(), Theme::Dark);
        auto* style = qobject_cast<QProxyStyle*>(qApp->style());
        QVERIFY(style && style->baseStyle());
        QCOMPARE(style->baseStyle()->name().toLower(), u"fusion"_s);

        light->trigger();
        QCOMPARE(storedTheme(), Theme::Light);
        QVERIFY(!isDarkPalette(qApp->palette()));

        system->trigger();
        QCOMPARE(storedTheme(), Theme::System);
        QCOMPARE(qApp->palette().color(QPalette::Window), lightWindow);

        // A quiet window (screenshots, tests) applies a theme but leaves the settings alone.
        MainWindow quietWindow(quiet());
        quietWindow.findChild<QAction*>(u"theme-dark"_s)->trigger();
        QCOMPARE(currentTheme(), Theme::Dark);
        QCOMPARE(storedTheme(), Theme::System);
        // A window made later shows the theme in force.
        MainWindow later(quiet());
        QVERIFY(later.findChild<QAction*>(u"theme-dark"_s)->isChecked());
    }

    void screenshotThemeAndSize()
    {
        QCOMPARE(parseScreenshotSize(u"1200x700"_s), QSize(1200, 700));
        QVERIFY(!parseScreenshotSize(u"1200"_s).isValid());
        QVERIFY(!parseScreenshotSize(u"wide"_s).isValid());

        ScreenshotRequest request;
        request.checkpoint = m_draft;
        request.output = m_dir.filePath(u"dark.png"_s);
        request.theme = u"dark"_s;
        request.size = QSize(1200, 700);
        QString error;
        QCOMPARE(renderScreenshot(request, &error), 0);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QImage image(request.output);
        QCOMPARE(image.size() / image.devicePixelRatio(), QSize(1200, 700));
        // The window's background (the bottom row, in the status bar) is the dark theme's.
        const QColor corner = image.pixelColor(image.width() / 2, image.height() - 2);
        QVERIFY2(corner.lightness() < 80, qPrintable(corner.name()));

        applyTheme(Theme::System);
        request.theme = u"sepia"_s;
        QCOMPARE(renderScreenshot(request, &error), 2);
        QVERIFY(error.contains(u"sepia"_s));
    }
};

QTEST_MAIN(TestGuiTheme)
#include "tst_gui_theme.moc"
