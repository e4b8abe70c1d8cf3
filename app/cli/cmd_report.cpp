// `report FILES... [--baseline ARM] [--markdown] [--json] [--plot OUT.png|.svg|.pdf] [--drafter-ms MS
// [--drafter-kind chain|block] [--saving-ms MS | --plan DRAFT_PATH [plan options]]]`: benchmark statistics
// headless, with the speed model (speed-model.md) when a drafter time is given. Two /metrics scrapes are
// differenced in the order given (first = before).
#include "args.h"
#include "command.h"
#include "core/bench/bencherror.h"
#include "core/bench/benchimport.h"
#include "core/bench/benchreport.h"
#include "core/bench/benchreportformat.h"
#include "format.h"
#include "speedargs.h"
#include "speedmodeltext.h"

#ifdef SPARK_CLI_PLOTS
#include "views/bench/benchplot.h"
#include "views/bench/benchplotqcp.h"

#include <QApplication>
#endif

#include <cstdlib>
#include <iostream>

namespace spark::cli {
namespace {

#ifdef SPARK_CLI_PLOTS
void writePlot(const BenchReport& report, const std::string& path)
{
    // QCustomPlot is a widget: it needs a QApplication, which needs a platform. Without a display use
    // the offscreen one, so that `report --plot` works over ssh and in CI.
    if (std::getenv("QT_QPA_PLATFORM") == nullptr && std::getenv("DISPLAY") == nullptr &&
        std::getenv("WAYLAND_DISPLAY") == nullptr) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    static int argc = 1;
    static char name[] = "sparkulator-cli";
    static char* argv[] = {name, nullptr};
    QApplication app(argc, argv);
    QCustomPlot plot;
    constexpr int kWidth = 1400;
    constexpr int kHeight = 1000;
    plot.resize(kWidth, kHeight);
    BenchPlot::populateOverview(plot, report);
    const auto file = QString::fromStdString(path);
    QString error;
    if (!BenchPlot::save(plot, file, kWidth, kHeight, &error)) {
        throw std::runtime_error(error.toStdString());
    }
}
#endif

void printStatistics(const BenchReport& report)
{
    for (const auto& setup : report.setups) {
        std::cout << "baseline: " << setup.baselineArm
                  << (report.setups.size() > 1 ? "  (setup " + setup.label() + ")" : std::string()) << "\n";
    }
    std::cout << "\n";
    Table cells(
        {"arm", "prompt", "n", "decode tok/s", "sd", "median", "CV %", "accept %", "AL", "per-position"});
    for (const auto& c : report.cells) {
        const auto* d = c.metric(benchmetric::kDecodeTokS);
        const auto* r = c.metric(benchmetric::kAcceptanceRate);
        const auto* al = c.metric(benchmetric::kAcceptanceLength);
        std::string positions;
        for (const double p : c.perPositionMean) {
            positions += (positions.empty() ? "" : " ") + formatFixed(p, 3);
        }
        cells.add({c.arm, c.promptLen > 0 ? std::to_string(c.promptLen) : "-", std::to_string(c.records),
                   d ? formatFixed(d->mean, 3) : "-", d ? formatFixed(d->sd, 3) : "-",
                   d ? formatFixed(d->median, 3) : "-", d ? formatFixed(100 * d->cv, 2) : "-",
                   r ? formatFixed(100 * r->mean, 2) : "-", al ? formatFixed(al->mean, 4) : "-",
                   positions.empty() ? "-" : positions});
    }
    cells.print(std::cout);
    if (report.comparisons.empty()) {
        return;
    }
    std::cout << "\n";
    Table comparisons(
        {"metric", "prompt", "arm", "vs", "delta", "delta %", "CI low", "CI high", "t", "df", "p", "sigma"});
    for (const auto& c : report.comparisons) {
        const auto& w = c.welch;
        comparisons.add({benchMetricLabel(c.metric), c.promptLen > 0 ? std::to_string(c.promptLen) : "-",
                         c.candidateArm, c.baselineArm, formatFixed(w.diff, 4),
                         formatFixed(w.deltaPercent, 2), formatFixed(w.ciLow, 4), formatFixed(w.ciHigh, 4),
                         formatFixed(w.t, 3), formatFixed(w.df, 2), formatGeneral(w.p, 3),
                         formatFixed(w.sigma, 2) + (w.valid && !w.significant() ? " n.s." : "")});
    }
    comparisons.print(std::cout);
    std::cout << "\nsigma: Gaussian-equivalent significance -Phi^-1(p/2) of Welch's two-sided p; "
              << formatGeneral(100 * report.confidence, 3) << "% CI of the difference\n";
}

void printText(const BenchReport& report)
{
    printStatistics(report);
    if (report.speedModel) {
        printSpeedModel(std::cout, *report.speedModel);
    }
}

} // namespace

OptionTable reportOptions()
{
    return joinTables(
        {{
             {"baseline", "ARM", "an arm named like bf16, else the first",
              "the arm the others of its setup (target model, k) are compared with; each other setup "
              "keeps its own"},
             {"metric", "NAME", "decode_tok_s, acceptance_length, acceptance_rate",
              "a metric to compare between arms (repeatable)"},
             {"confidence", "P", "0.95", "confidence level of the intervals (between 0 and 1)"},
             {"arm", "ARM", "", "the arm of records whose file does not name one"},
             {"prompt-len", "N", "", "the prompt length of records whose file does not give one"},
             {"repeat", "N", "", "the repeat number of records whose file does not give one"},
             {"override-tags", "", "", "--arm, --prompt-len and --repeat win over the files' own"},
             {"markdown", "", "", "print Markdown tables (excludes --json)"},
             kJsonOption,
             {"plot", "OUT.png|.svg|.pdf", "",
              "draw the overview plot, PNG, SVG or PDF by the extension (needs a build with the GUI "
              "libraries)"},
         },
         speedOptionTable()});
}

int runReport(const std::vector<std::string>& argv)
{
    const Args args(argv, reportOptions());
    if (args.positional().empty()) {
        throw UsageError("give at least one benchmark file");
    }
    if (args.flag("markdown") && args.flag("json")) {
        throw UsageError("--markdown and --json are exclusive");
    }
    RecordTags tags;
    tags.arm = args.value("arm");
    if (args.value("prompt-len")) {
        tags.promptLen = args.integer("prompt-len", 0, 1, 100000000);
    }
    if (args.value("repeat")) {
        tags.repeat = static_cast<int>(args.integer("repeat", 0, 1, 1000000));
    }
    tags.override = args.flag("override-tags");
    BenchReportOptions options;
    options.baselineArm = args.value("baseline");
    if (!args.values("metric").empty()) {
        options.compareMetrics = args.values("metric");
    }
    options.confidence = args.number("confidence", 0.95);
    if (!(options.confidence > 0 && options.confidence < 1)) {
        throw UsageError("--confidence must be between 0 and 1, e.g. 0.95");
    }
    const auto speedOptions = speedModelOptionsFrom(args);
    const auto plotPath = args.value("plot");
#ifndef SPARK_CLI_PLOTS
    if (plotPath) {
        throw UsageError("--plot needs a build with the GUI libraries (SPARK_BUILD_GUI=ON)");
    }
#endif

    std::vector<std::filesystem::path> paths(args.positional().begin(), args.positional().end());
    BenchImport import;
    try {
        import = importBenchFiles(paths, tags);
    } catch (const BenchError& e) {
        std::cerr << "sparkulator-cli report: " << e.what() << "\n";
        return kExitError;
    }
    if (import.records.empty()) {
        std::cerr << "sparkulator-cli report: no benchmark records in the given files\n";
        return kExitError;
    }
    auto report = buildBenchReport(import.records, options, import.warnings);
    if (speedOptions) {
        try {
            report.speedModel = computeSpeedModel(report, *speedOptions);
        } catch (const SpeedModelError& e) {
            std::cerr << "sparkulator-cli report: speed model: " << e.what() << "\n";
            return kExitError;
        }
    }

    if (args.flag("json")) {
        std::cout << benchReportJson(report).dump(2) << "\n";
    } else if (args.flag("markdown")) {
        std::cout << benchReportMarkdown(report);
    } else {
        printText(report);
    }
    // Warnings go to stderr so that --json and --markdown output stays clean for pipes.
    if (!args.flag("markdown")) {
        for (const auto& w : report.warnings) {
            std::cerr << w.text() << "\n";
        }
        for (const auto& w : report.speedModel ? report.speedModel->warnings : std::vector<BenchWarning>()) {
            std::cerr << "speed model: " << w.text() << "\n";
        }
    }
#ifdef SPARK_CLI_PLOTS
    if (plotPath) {
        writePlot(report, *plotPath);
        std::cerr << "wrote " << *plotPath << "\n";
    }
#endif
    return kExitOk;
}

} // namespace spark::cli
