// `quantize PATH --out DIR [plan options] [card options] [--max-shard-size SIZE] [--threads N]
// [[--gptq] --hidden-states FILE [--samples N] [--k N] [--target-model DIR] [--gptq-memory SIZE]]
// [--no-verify]`: calibration on the capture when GPTQ or the hessian rounding asks for it, export, model
// card (README.md of the output), then verify.
#include "args.h"
#include "backendargs.h"
#include "captureargs.h"
#include "cardargs.h"
#include "command.h"
#include "core/bench/modelcard.h"
#include "core/calibrate/capturecalibration.h"
#include "core/export/exporter.h"
#include "core/export/verifier.h"
#include "format.h"
#include "planargs.h"
#include "progressbar.h"

#include <iostream>
#include <optional>

namespace spark::cli {

namespace {

CalibrationOptions calibrationOptionsFrom(const Args& args, unsigned threads)
{
    CalibrationOptions o;
    o.gptq = args.flag("gptq");
    const auto capture = args.value("hidden-states");
    if (!capture) {
        throw UsageError(std::string(o.gptq ? "--gptq" : "the hessian rounding") +
                         " needs --hidden-states FILE|DIR (a capture file or folder)");
    }
    o.capture = *capture;
    o.captureOptions = captureReadOptionsFrom(args);
    // The target model's checkpoint, for drafts that share its embeddings or head: --target-model when it
    // names a folder (else it only names the target in the card).
    o.target = targetModelFolder(args);
    o.samples = args.integer("samples", 0, 0, 100000000);
    o.k = static_cast<int>(args.integer("k", 2, 1, 64));
    if (const auto memory = args.value("gptq-memory")) {
        o.memoryBytes = parseByteSize(*memory);
    }
    o.threads = threads;
    o.progress = stderrProgress(o.gptq ? "gptq" : "hessian");
    return o;
}

void printCalibration(const CaptureCalibration& calibration)
{
    std::cout << calibration.summary() << "\n";
    const auto precision = std::cout.precision(4);
    for (const auto& m : calibration.modules()) {
        std::cout << "  " << m.name << ": output error " << m.outputError;
        if (m.gptq) {
            std::cout << " (RTN " << m.rtnOutputError << ", ";
        } else {
            std::cout << " (";
        }
        std::cout << m.tokens << " input rows)" << (m.fellBack ? ", Cholesky failed: RTN codes" : "") << "\n";
    }
    for (const auto& name : calibration.skipped()) {
        std::cout << "  " << name << ": its scheme has no GPTQ, rounded by its method\n";
    }
    std::cout.precision(precision);
}

} // namespace

OptionTable quantizeOptions()
{
    return joinTables(
        {{
             {"out", "DIR", "", "the folder to write the checkpoint and its model card to (required)"},
             {"max-shard-size", "SIZE", "one file",
              "split the weights into shards of at most SIZE (e.g. 2GB)"},
             kThreadsOption,
             {"no-verify", "", "", "skip the bit-exact verification of the export"},
             {"gptq", "", "",
              "solve the integer schemes' codes by GPTQ from captured hidden states (with --hidden-states; "
              "a draft sharing its target's embeddings or head needs --target-model DIR)"},
             {"hidden-states", "FILE|DIR", "",
              "the capture of target hidden states that GPTQ and the hessian rounding calibrate on"},
             {"samples", "N", "0", "captured sequences calibration uses, 0: all (with --hidden-states)"},
             {"k", "K", "2", "draft steps unrolled per anchor, the serving k (with --hidden-states)"},
             {"gptq-memory", "SIZE", "8GiB",
              "memory for the FP64 Hessians held at once, more modules take more passes (with "
              "--hidden-states)"},
             {"target-checkpoint", "PATH", "", "deprecated spelling of --target-model", "target-model"},
         },
         captureReadOptionTable(),
         planOptionTable(),
         backendOptionTable(),
         cardOptionTable()});
}

int runQuantize(const std::vector<std::string>& argv)
{
    const Args args(argv, quantizeOptions());
    args.expectPositional(1);
    const auto out = args.value("out");
    if (!out) {
        throw UsageError("--out DIR is required");
    }
    const auto planOptions = planOptionsFrom(args);
    const auto cardOptions = cardOptionsFrom(args);
    const auto sourcePtr = std::make_shared<const Checkpoint>(Checkpoint::open(args.positional()[0]));
    const auto& source = *sourcePtr;
    std::vector<TensorInfo> infos;
    for (const auto& t : source.tensors()) {
        infos.push_back(t.info);
    }
    auto plan = makePlan(source.config(), infos, planOptions);
    if (!plan.errors.empty()) {
        for (const auto& e : plan.errors) {
            std::cerr << "sparkulator-cli quantize: plan error: " << e << "\n";
        }
        return kExitError;
    }

    const auto backend = backendFrom(args);
    checkBackendServes(args, *backend, plan.schemesUsed());
    ExportOptions options;
    options.backend = backend.get();
    options.output = *out;
    options.threads = static_cast<unsigned>(args.integer("threads", 0, 0, 1024));
    if (const auto size = args.value("max-shard-size")) {
        options.maxShardBytes = parseByteSize(*size);
    }
    options.progress = stderrProgress("quantize");
    std::optional<CaptureCalibration> calibration;
    if (args.flag("gptq") || planNeedsCapture(plan)) {
        calibration.emplace(
            calibrateFromCapture(sourcePtr, plan, *out, calibrationOptionsFrom(args, options.threads)));
        printCalibration(*calibration);
        options.calibrated = &calibration->weights();
    } else {
        for (const char* name : {"hidden-states", "layer-ids", "prompt-tokens"}) {
            if (args.value(name)) {
                throw UsageError(std::string("--") + name +
                                 " is for --gptq or the hessian rounding here (offline acceptance: the "
                                 "acceptance command)");
            }
        }
    }
    options.modelCard = renderModelCard(modelCardInputs(source, plan, *out, cardOptions));
    const auto result = exportCheckpoint(source, plan, options);
    std::string roundings;
    for (const auto* method : plan.roundingsUsed()) {
        roundings += (roundings.empty() ? "" : " + ") + std::string(method->name);
    }
    std::cout << "quantized " << result.quantizedModules << " modules (" << plan.schemeSummary() << ", "
              << (roundings.empty() ? std::string("rtn") : roundings) << " rounding"
              << (args.flag("gptq") ? ", GPTQ codes" : "") << ", " << backend->description() << "), copied "
              << result.copiedTensors << " tensors and " << result.otherFiles.size() << " other files\n"
              << "size: " << formatBytes(result.bytesBefore) << " -> " << formatBytes(result.bytesAfter)
              << " in " << result.shardFiles.size() << " file(s) at " << *out << "\n";
    if (args.flag("no-verify")) {
        return kExitOk;
    }
    VerifyOptions verifyOptions;
    verifyOptions.threads = options.threads;
    verifyOptions.backend = backend.get();
    verifyOptions.targetLayers = planOptions.targetLayers;
    verifyOptions.progress = stderrProgress("verify");
    const auto report = verifyExport(source, Checkpoint::open(*out), verifyOptions);
    for (const auto& p : report.problems) {
        std::cout << "problem: " << p.subject << ": " << p.message << "\n";
    }
    std::cout << report.summary() << "\n";
    return report.ok() ? kExitOk : kExitFailure;
}

} // namespace spark::cli
