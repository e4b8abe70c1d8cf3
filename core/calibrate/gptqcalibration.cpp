#include "core/calibrate/gptqcalibration.h"

#include "core/forward/acceptance.h"
#include "core/forward/draftforward.h"
#include "core/forward/hessiancapture.h"
#include "core/forward/hiddenstatecapture.h"
#include "core/forward/linearsource.h"
#include "core/io/floatconv.h"
#include "core/io/ioerror.h"
#include "core/io/shardedwriter.h"
#include "core/quant/modulecontexts.h"
#include "core/util/parallel.h"

#include <chrono>
#include <cstdio>
#include <cstring>

namespace spark {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

/// One module GPTQ rounds: its planned module, source weight and the ranges chosen on the original weight.
struct Target
{
    const PlannedModule* module = nullptr;
    const CheckpointTensor* weight = nullptr;
    /// The searched ranges; under RTN each group's own min-max, made explicit once the weight is read (the
    /// solved weight has other min-maxes, so the exporter must not derive them again).
    std::shared_ptr<const GroupRanges> ranges;
};

std::int64_t rowsOf(const Target& t)
{
    return static_cast<std::int64_t>(t.weight->info.shape[0]);
}

std::int64_t colsOf(const Target& t)
{
    return static_cast<std::int64_t>(t.weight->info.shape[1]);
}

/// Rows [first, first + count) of @p ranges as ranges of their own.
GroupRanges rowsOfRanges(const GroupRanges& ranges, std::int64_t first, std::int64_t count)
{
    GroupRanges out;
    out.groupsPerRow = ranges.groupsPerRow;
    out.absmax = ranges.absmax;
    const auto begin = static_cast<std::size_t>(first) * ranges.groupsPerRow;
    const auto end = begin + static_cast<std::size_t>(count) * ranges.groupsPerRow;
    out.mins.assign(ranges.mins.begin() + begin, ranges.mins.begin() + end);
    out.maxs.assign(ranges.maxs.begin() + begin, ranges.maxs.begin() + end);
    return out;
}

/// tr(W H Wᵀ) of @p rows rows of @p w under @p h (FP64): the denominator that pools slices' errors.
double outputEnergy(const float* w, std::int64_t rows, std::int64_t cols, const std::vector<double>& h)
{
    double total = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* row = w + r * cols;
        for (std::int64_t i = 0; i < cols; ++i) {
            double s = 0;
            for (std::int64_t j = 0; j < cols; ++j) {
                s += h[static_cast<std::size_t>(i * cols + j)] * row[j];
            }
            total += s * row[i];
        }
    }
    return total;
}

/// The weight's bytes in its own dtype; every value of @p q is representable in it (Q = dtype(q·s)).
std::vector<std::byte> toDTypeBytes(DType dtype, const std::vector<float>& q)
{
    std::vector<std::byte> bytes(q.size() * (dtype == DType::F32 ? 4 : 2));
    for (std::size_t i = 0; i < q.size(); ++i) {
        if (dtype == DType::F32) {
            std::memcpy(bytes.data() + 4 * i, &q[i], 4);
            continue;
        }
        const std::uint16_t bits = dtype == DType::BF16 ? floatToBf16(q[i]) : floatToF16(q[i]);
        std::memcpy(bytes.data() + 2 * i, &bits, 2);
    }
    return bytes;
}

/// Solves one module slice by slice (one Hessian per row range) and returns its weight Q; fixes RTN's
/// ranges on the original weight first.
std::vector<float> solveModule(const std::shared_ptr<const Checkpoint>& source, Target& t,
                               const std::vector<HessianSlice>& slices, const GptqOptions& solver,
                               unsigned threads, GptqModuleReport& report)
{
    const auto rows = rowsOf(t);
    const auto cols = colsOf(t);
    std::vector<float> w(static_cast<std::size_t>(rows * cols));
    storedLinear(source, *t.weight)->decode(0, static_cast<std::size_t>(rows), w.data());
    if (!t.ranges) {
        t.ranges = std::make_shared<const GroupRanges>(minMaxRanges(*t.module->scheme, w.data(), rows, cols));
    }
    std::vector<float> q(w.size());
    double error = 0, rtnError = 0, energy = 0;
    for (const auto& slice : slices) {
        const float* original = w.data() + slice.firstRow * cols;
        const auto solved = gptqRound(
            t.weight->info.name, original, slice.rowCount, cols, t.weight->info.dtype, slice.xtx,
            *t.module->scheme, rowsOfRanges(*t.ranges, slice.firstRow, slice.rowCount), solver, threads);
        std::copy(solved.weight.begin(), solved.weight.end(), q.begin() + slice.firstRow * cols);
        // Slices pool by their output energy; a whole module needs none.
        const double e = slices.size() == 1 ? 1.0 : outputEnergy(original, slice.rowCount, cols, slice.xtx);
        error += solved.outputError * e;
        rtnError += solved.rtnOutputError * e;
        energy += e;
        report.fellBack = report.fellBack || solved.fellBack;
    }
    report.outputError = energy > 0 ? error / energy : 0;
    report.rtnOutputError = energy > 0 ? rtnError / energy : 0;
    return q;
}

std::vector<std::string> tensorNames(const Checkpoint& checkpoint)
{
    std::vector<std::string> names;
    for (const auto& t : checkpoint.tensors()) {
        names.push_back(t.info.name);
    }
    return names;
}

} // namespace

GptqCalibration::GptqCalibration(const fs::path& output, const fs::path& source)
    : m_temp(std::make_unique<StagingDirectory>(fs::path(output.string() + ".gptq"),
                                                std::vector<fs::path>{source}))
{
}

std::string GptqCalibration::summary() const
{
    double error = 0, rtn = 0;
    for (const auto& m : m_modules) {
        error += m.outputError;
        rtn += m.rtnOutputError;
    }
    const auto n = static_cast<double>(std::max<std::size_t>(m_modules.size(), 1));
    char text[256];
    std::snprintf(
        text, sizeof text,
        "GPTQ on %zu modules from %lld sequence%s (%lld anchors, %lld pass%s): mean output error %.4g "
        "(RTN %.4g), Hessians %.1f s, solve %.1f s",
        m_modules.size(), static_cast<long long>(m_samples), m_samples == 1 ? "" : "s",
        static_cast<long long>(m_anchors), static_cast<long long>(m_passes), m_passes == 1 ? "" : "es",
        error / n, rtn / n, m_hessianSeconds, m_solveSeconds);
    return text;
}

GptqCalibration calibrateGptq(const std::shared_ptr<const Checkpoint>& source, QuantPlan& plan,
                              const fs::path& output, const GptqCalibrationOptions& options)
{
    const unsigned threads = resolveThreads(static_cast<int>(options.threads));
    GptqCalibration result(output, source->folder());

    // The ranges of every quantized module as its rounding method chose them on the original weight.
    std::vector<Target> targets;
    std::vector<ContextRequest> requests;
    for (const auto* m : plan.quantizedModules()) {
        if (!gptqSupports(*m->scheme)) {
            result.m_skipped.push_back(m->name);
            continue;
        }
        const auto* weight = source->find(m->weightTensor);
        if (!weight || weight->info.shape.size() != 2 || !isQuantizableFloat(weight->info.dtype)) {
            throw ExportError("planned weight '" + m->weightTensor + "' is not a 2-D BF16/F16/F32 tensor");
        }
        targets.push_back({m, weight, nullptr});
        requests.push_back({weight, m->scheme, m->rounding, m->vllmName});
    }
    if (targets.empty()) {
        throw ExportError("GPTQ: no quantized module uses an integer scheme (W4A16, W4A16_ASYM, W8A16, ...)");
    }
    const auto contexts = moduleContexts(*source, requests, threads);
    for (std::size_t i = 0; i < targets.size(); ++i) {
        if (!contexts[i].error.empty()) {
            throw ExportError(contexts[i].error);
        }
        targets[i].ranges = contexts[i].context.ranges;
    }

    const auto targetPath = options.target.empty() ? targetBesideCapture(options.capture) : options.target;
    const auto target =
        targetPath.empty() ? nullptr : std::make_shared<const Checkpoint>(Checkpoint::open(targetPath));
    const auto capture = openCaptureFor(options.capture, options.captureOptions, *source, target.get());
    auto spec =
        readDraftSpec(source->config(), tensorNames(*source), (source->folder() / "config.json").string());
    matchCapture(capture, spec);
    DraftForward draft(std::move(spec), DraftWeights(source, target), threads);

    std::map<std::string, Target*> byName;
    std::vector<std::string> names;
    for (auto& t : targets) {
        byName[t.module->name] = &t;
        names.push_back(t.module->name);
    }
    // The capture's progress (anchors over every pass); the solves between passes only honour a cancel.
    std::uint64_t done = 0, total = 0;
    HessianCaptureOptions captureOptions;
    captureOptions.samples = options.samples;
    captureOptions.k = options.k;
    captureOptions.memoryBytes = options.memoryBytes;
    captureOptions.threads = threads;
    captureOptions.progress = [&](std::uint64_t d, std::uint64_t t) {
        done = d;
        total = t;
        return reportProgress(options.progress, d, t);
    };
    // Each pass's modules are solved lazily, one at a time, while the pass's file is written; its
    // Hessians are dropped before the next pass.
    captureOptions.onPass = [&](std::map<std::string, std::vector<HessianSlice>>&& hessians) {
        std::vector<PlannedTensor> tensors;
        std::vector<Target*> pass;
        for (auto& [name, slices] : hessians) {
            auto* t = byName.at(name);
            pass.push_back(t);
            std::int64_t tokens = 0;
            for (const auto& slice : slices) {
                tokens += slice.tokens;
            }
            const auto& info = t->weight->info;
            tensors.push_back(
                {{info.name, info.dtype, info.shape}, [&, t, slices = &slices, tokens](ByteSink& sink) {
                     const auto start = Clock::now();
                     GptqModuleReport report{t->module->name, tokens, 0, 0, false};
                     const auto q = solveModule(source, *t, *slices, options.solver, threads, report);
                     const auto bytes = toDTypeBytes(info.dtype, q);
                     sink.write(std::span<const std::byte>(bytes));
                     result.m_modules.push_back(std::move(report));
                     result.m_solveSeconds += secondsSince(start);
                     if (!reportProgress(options.progress, done, total)) {
                         throw IoError(IoErrorKind::Cancelled, t->module->name, "cancelled");
                     }
                 }});
        }
        const auto folder = result.m_temp->path() / ("pass-" + std::to_string(++result.m_passes));
        fs::create_directories(folder);
        writeSafetensorsShards(folder, std::move(tensors));
        const auto file = std::make_shared<const Checkpoint>(Checkpoint::open(folder));
        for (const auto* t : pass) {
            SchemeContext context;
            context.ranges = t->ranges;
            result.m_weights.modules[t->module->name] = {file, context};
        }
    };
    const auto hessians = captureHessians(draft, capture, names, captureOptions);
    result.m_hessianSeconds = hessians.seconds - result.m_solveSeconds;
    result.m_samples = hessians.samples;
    result.m_anchors = hessians.anchors;
    for (const auto& t : targets) {
        if (!result.m_weights.modules.contains(t.module->name)) {
            throw ExportError("GPTQ: no captured input reaches '" + t.module->name +
                              "' (the draft's forward never applies it to the capture)");
        }
    }
    for (auto& group : plan.groups) {
        group.gptq = gptqSupports(*group.scheme);
    }
    return result;
}

} // namespace spark
