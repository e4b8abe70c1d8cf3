// The desktop application: `sparkulator [PATH]` opens the GUI; `sparkulator --screenshot OUT.png
// [--tab tensors|plan|benchmarks|...] [--select NAME] [--analyze] [--theme light|dark] [--size WxH]
// [--bench FILE]... PATH` renders the window offscreen to a PNG and exits.
#include "views/shared/theme.h"
#include "views/window/mainwindow.h"
#include "views/window/screenshot.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>
#include <cstdio>
#include <cstring>

namespace {

constexpr int kExitUsage = 2;

// Decided before QApplication exists, because the platform plugin is chosen in its constructor: a
// screenshot, --help and --version need no display (CI, README generation, a terminal over ssh).
bool needsNoDisplay(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        const char* arg = argv[i];
        if (std::strcmp(arg, "--") == 0) {
            break;
        }
        if (std::strcmp(arg, "--screenshot") == 0 || std::strncmp(arg, "--screenshot=", 13) == 0 ||
            std::strcmp(arg, "--help") == 0 || std::strcmp(arg, "-h") == 0 || std::strcmp(arg, "-?") == 0 ||
            std::strcmp(arg, "--help-all") == 0 || std::strcmp(arg, "--version") == 0 ||
            std::strcmp(arg, "-v") == 0) {
            return true;
        }
    }
    return false;
}

void printError(const QString& message)
{
    std::fprintf(stderr, "sparkulator: %s\n", message.toLocal8Bit().constData());
}

} // namespace

int main(int argc, char** argv)
{
    // A screenshot or the help renders without a display unless a platform is forced.
    if (needsNoDisplay(argc, argv) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Sparkulator"));
    QApplication::setOrganizationName(QStringLiteral("Sparkulator"));
    QApplication::setApplicationVersion(QStringLiteral(SPARK_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("sparkulator"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/sparkulator.svg")));

    QCommandLineParser parser;
    parser.setApplicationDescription(QApplication::translate(
        "main", "Inspector and quantizer for speculative-decoding draft checkpoints: every "
                "compressed-tensors scheme vLLM serves (W4A16 any group, W4A16_ASYM, W8A16, FP8_DYNAMIC, "
                "NVFP4A16), one per module."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QApplication::translate("main",
                                "Render the window offscreen to <png> after loading PATH, then exit."),
        QStringLiteral("png"));
    const QCommandLineOption tab(
        QStringLiteral("tab"),
        QApplication::translate(
            "main",
            "Tab to show in the screenshot (tensors, plan, budget, acceptance, benchmarks, compare)."),
        QStringLiteral("name"), QStringLiteral("tensors"));
    const QCommandLineOption select(
        QStringLiteral("select"),
        QApplication::translate("main", "Tensor, module or layer to select in the screenshot."),
        QStringLiteral("tensor"));
    const QCommandLineOption analyze(
        QStringLiteral("analyze"),
        QApplication::translate("main",
                                "Run the analysis (F5) and wait for it before taking the screenshot."));
    const QCommandLineOption sweep(
        QStringLiteral("sweep"),
        QApplication::translate("main", "Run the Budget tab's sweep and wait for it before the screenshot."));
    const QCommandLineOption score(
        QStringLiteral("score"),
        QApplication::translate("main",
                                "Score the draft by acceptance in the Budget tab on the --acceptance capture "
                                "and wait for it before the screenshot (with --budget-point, the plan of "
                                "that point is then measured on the held-out samples)."));
    const QCommandLineOption budgetPoint(
        QStringLiteral("budget-point"),
        QApplication::translate(
            "main",
            "After --sweep or --score, move the Budget tab's slider to <fraction> of its range (0 the "
            "smallest plan, 1 the most accurate) and apply that plan."),
        QStringLiteral("fraction"));
    const QCommandLineOption compare(
        QStringLiteral("compare"),
        QApplication::translate("main",
                                "Compare PATH with the quantized output <out> in the Compare tab before the "
                                "screenshot."),
        QStringLiteral("out"));
    const QCommandLineOption theme(
        QStringLiteral("theme"),
        QApplication::translate("main", "Theme of the screenshot: light or dark (View ▸ Theme)."),
        QStringLiteral("theme"));
    const QCommandLineOption size(
        QStringLiteral("size"),
        QApplication::translate("main", "Window size of the screenshot, e.g. 1200x700."),
        QStringLiteral("WxH"));
    const QCommandLineOption bench(
        QStringLiteral("bench"),
        QApplication::translate("main",
                                "Benchmark file to import into the Benchmarks tab before the screenshot "
                                "(repeatable)."),
        QStringLiteral("file"));
    const QCommandLineOption acceptance(
        QStringLiteral("acceptance"),
        QApplication::translate(
            "main", "Run the Acceptance tab on the capture <capture> (the plan against BF16, then "
                    "the per-unit sensitivity) before the screenshot."),
        QStringLiteral("capture"));
    const QCommandLineOption acceptanceTarget(
        QStringLiteral("acceptance-target"),
        QApplication::translate("main", "The target checkpoint of --acceptance, when the draft needs one."),
        QStringLiteral("path"));
    parser.addOptions({screenshot, tab, select, analyze, sweep, score, budgetPoint, compare, theme, size,
                       bench, acceptance, acceptanceTarget});
    parser.addPositionalArgument(
        QStringLiteral("path"),
        QApplication::translate("main",
                                "Checkpoint folder, .safetensors file or model.safetensors.index.json."),
        QStringLiteral("[path]"));
    if (!parser.parse(QApplication::arguments())) {
        printError(parser.errorText());
        return kExitUsage;
    }
    if (parser.isSet(QStringLiteral("help"))) {
        parser.showHelp(0);
    }
    if (parser.isSet(QStringLiteral("version"))) {
        parser.showVersion();
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() > 1) {
        printError(
            QApplication::translate("main", "expected at most one path, got %1").arg(positional.size()));
        return kExitUsage;
    }
    const QString path = positional.value(0);

    if (parser.isSet(screenshot)) {
        spark::ScreenshotRequest request;
        request.output = parser.value(screenshot);
        request.checkpoint = path;
        request.tab = parser.value(tab);
        request.select = parser.value(select);
        request.analyze = parser.isSet(analyze);
        request.sweep = parser.isSet(sweep);
        request.score = parser.isSet(score);
        if (parser.isSet(budgetPoint)) {
            bool ok = false;
            request.budgetPoint = parser.value(budgetPoint).toDouble(&ok);
            if (!ok || request.budgetPoint < 0 || request.budgetPoint > 1) {
                printError(
                    QApplication::translate("main", "--budget-point takes a fraction from 0 to 1, not '%1'")
                        .arg(parser.value(budgetPoint)));
                return kExitUsage;
            }
        }
        request.compareWith = parser.value(compare);
        request.theme = parser.value(theme);
        request.bench = parser.values(bench);
        request.acceptanceCapture = parser.value(acceptance);
        request.acceptanceTarget = parser.value(acceptanceTarget);
        if (parser.isSet(size)) {
            request.size = spark::parseScreenshotSize(parser.value(size));
            if (!request.size.isValid()) {
                printError(
                    QApplication::translate("main", "--size takes WIDTHxHEIGHT, e.g. 1200x700, not '%1'")
                        .arg(parser.value(size)));
                return kExitUsage;
            }
        }
        QString error;
        const int code = spark::renderScreenshot(request, &error);
        if (code != 0) {
            printError(error);
        }
        return code;
    }
    if (parser.isSet(tab) || parser.isSet(select) || parser.isSet(analyze) || parser.isSet(sweep) ||
        parser.isSet(score) || parser.isSet(budgetPoint) || parser.isSet(compare) || parser.isSet(theme) ||
        parser.isSet(size) || parser.isSet(bench) || parser.isSet(acceptance) ||
        parser.isSet(acceptanceTarget)) {
        printError(QApplication::translate("main",
                                           "--tab, --select, --analyze, --sweep, --score, --budget-point, "
                                           "--compare, --theme, --size, --bench and --acceptance only "
                                           "apply with --screenshot"));
        return kExitUsage;
    }

    // View ▸ Theme is remembered; System leaves the desktop's style and palette alone.
    if (const auto stored = spark::storedTheme(); stored != spark::Theme::System) {
        spark::applyTheme(stored);
    }
    spark::MainWindow window;
    window.show();
    if (!path.isEmpty()) {
        // Once the event loop runs, so that an error dialog has a visible window to sit on.
        QTimer::singleShot(0, &window, [&window, path] { window.open(path); });
    }
    return QApplication::exec();
}
