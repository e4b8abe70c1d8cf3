#include "core/calibrate/capturecalibration.h"

#include "core/forward/acceptance.h"
#include "core/forward/draftforward.h"
#include "core/forward/hessiancapture.h"
#include "core/forward/hiddenstatecapture.h"
#include "core/forward/linearsource.h"
#include "core/io/floatconv.h"
#include "core/io/ioerror.h"
#include "core/io/shardedwriter.h"
#include "core/quant/modulecontexts.h"
#include "core/quant/roundingsearch.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>

namespace spark {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

/// One calibrated module: its planned module, source weight and the ranges its codes are rounded under.
struct Target
{
    const PlannedModule* module = nullptr;
    const CheckpointTensor* weight = nullptr;
    bool gptq = false; ///< GPTQ solves its codes
    /// The searched ranges; under RTN each group's own min-max, made explicit once the weight is read (the
    /// solved weight has other min-maxes, so the exporter must not derive them again); under `hessian`
    /// chosen from the slices' Hessians.
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

/// The ranges of a rounding that needsHessian(): each slice's rows searched under the slice's Hessian, read
/// from the source's own bytes.
std::shared_ptr<const GroupRanges> hessianRanges(const Checkpoint& source, const Target& t,
                                                 const std::vector<HessianSlice>& slices, unsigned threads)
{
    const auto& info = t.weight->info;
    const auto cols = colsOf(t);
    const auto bytes = source.bytes(*t.weight);
    const auto rowBytes = bytes.size() / static_cast<std::size_t>(rowsOf(t));
    auto out = std::make_shared<GroupRanges>();
    for (const auto& slice : slices) {
        const WeightRows rows{info.dtype,
                              bytes.data() + static_cast<std::size_t>(slice.firstRow) * rowBytes,
                              static_cast<std::size_t>(slice.rowCount),
                              static_cast<std::size_t>(cols),
                              0,
                              info.name};
        const auto part = searchRanges(*t.module->rounding, *t.module->scheme, rows, threads, &slice.xtx);
        out->groupsPerRow = part->groupsPerRow;
        out->mins.resize(static_cast<std::size_t>(rowsOf(t)) * part->groupsPerRow);
        out->maxs.resize(out->mins.size());
        const auto offset = static_cast<std::size_t>(slice.firstRow) * part->groupsPerRow;
        std::copy(part->mins.begin(), part->mins.end(),
                  out->mins.begin() + static_cast<std::ptrdiff_t>(offset));
        std::copy(part->maxs.begin(), part->maxs.end(),
                  out->maxs.begin() + static_cast<std::ptrdiff_t>(offset));
        out->absmax = std::max(out->absmax, part->absmax);
    }
    return out;
}

/// Calibrates one module slice by slice (one Hessian per row range): fixes its ranges (min-max, or the
/// `hessian` search), then, under GPTQ, solves its codes and returns its weight Q; without GPTQ, returns
/// nothing and only measures the output error of RTN codes under the ranges.
std::optional<std::vector<float>> calibrateModule(const std::shared_ptr<const Checkpoint>& source, Target& t,
                                                  const std::vector<HessianSlice>& slices,
                                                  const GptqOptions& solver, unsigned threads,
                                                  CalibratedModuleReport& report)
{
    const auto rows = rowsOf(t);
    const auto cols = colsOf(t);
    const auto dtype = t.weight->info.dtype;
    std::vector<float> w(static_cast<std::size_t>(rows * cols));
    storedLinear(source, *t.weight)->decode(0, static_cast<std::size_t>(rows), w.data());
    if (t.module->rounding->needsHessian()) {
        t.ranges = hessianRanges(*source, t, slices, threads);
    } else if (!t.ranges) {
        t.ranges = std::make_shared<const GroupRanges>(minMaxRanges(*t.module->scheme, w.data(), rows, cols));
    }
    std::optional<std::vector<float>> q;
    if (t.gptq) {
        q.emplace(w.size());
    }
    double error = 0, rtnError = 0, energy = 0;
    for (const auto& slice : slices) {
        const float* original = w.data() + slice.firstRow * cols;
        const auto ranges = rowsOfRanges(*t.ranges, slice.firstRow, slice.rowCount);
        double sliceError = 0, sliceRtn = 0;
        if (q) {
            const auto solved = gptqRound(t.weight->info.name, original, slice.rowCount, cols, dtype,
                                          slice.xtx, *t.module->scheme, ranges, solver, threads);
            std::copy(solved.weight.begin(), solved.weight.end(), q->begin() + slice.firstRow * cols);
            sliceError = solved.outputError;
            sliceRtn = solved.rtnOutputError;
            report.fellBack = report.fellBack || solved.fellBack;
        } else {
            sliceError = sliceRtn =
                rtnOutputError(original, slice.rowCount, cols, dtype, slice.xtx, *t.module->scheme, ranges);
        }
        // Slices pool by their output energy; a whole module needs none.
        const double e = slices.size() == 1 ? 1.0 : outputEnergy(original, slice.rowCount, cols, slice.xtx);
        error += sliceError * e;
        rtnError += sliceRtn * e;
        energy += e;
    }
    report.outputError = energy > 0 ? error / energy : 0;
    report.rtnOutputError = energy > 0 ? rtnError / energy : 0;
    report.gptq = t.gptq;
    return q;
}

} // namespace

CaptureCalibration::CaptureCalibration(const fs::path& output, const fs::path& source)
    : m_temp(std::make_unique<StagingDirectory>(fs::path(output.string() + ".calibration"),
                                                std::vector<fs::path>{source}))
{
}

std::string CaptureCalibration::summary() const
{
    double error = 0, rtn = 0;
    for (const auto& m : m_modules) {
        error += m.outputError;
        rtn += m.rtnOutputError;
    }
    const auto n = static_cast<double>(std::max<std::size_t>(m_modules.size(), 1));
    const bool gptq = std::any_of(m_modules.begin(), m_modules.end(), [](const auto& m) { return m.gptq; });
    char rtnText[48] = "";
    if (gptq) {
        std::snprintf(rtnText, sizeof rtnText, " (RTN %.4g)", rtn / n);
    }
    char text[320];
    std::snprintf(
        text, sizeof text,
        "%s on %zu modules from %lld sequence%s (%lld anchors, %lld pass%s): mean output error %.4g%s, "
        "Hessians %.1f s, %s %.1f s",
        gptq ? "GPTQ" : "Hessian-chosen scales", m_modules.size(), static_cast<long long>(m_samples),
        m_samples == 1 ? "" : "s", static_cast<long long>(m_anchors), static_cast<long long>(m_passes),
        m_passes == 1 ? "" : "es", error / n, rtnText, m_hessianSeconds, gptq ? "solve" : "search",
        m_solveSeconds);
    return text;
}

bool planNeedsCapture(const QuantPlan& plan)
{
    const auto modules = plan.quantizedModules();
    return std::any_of(modules.begin(), modules.end(),
                       [](const PlannedModule* m) { return m->rounding->needsHessian(); });
}

CaptureCalibration calibrateFromCapture(const std::shared_ptr<const Checkpoint>& source, QuantPlan& plan,
                                        const fs::path& output, const CalibrationOptions& options)
{
    const unsigned threads = resolveThreads(static_cast<int>(options.threads));
    CaptureCalibration result(output, source->folder());

    // The ranges of every module calibrated by GPTQ alone, as its rounding method chose them on the
    // original weight; a `hessian` module's come from its Hessian below.
    std::vector<Target> targets;
    std::vector<ContextRequest> requests;
    std::vector<std::size_t> searchedOnWeight;
    for (const auto* m : plan.quantizedModules()) {
        const bool gptq = options.gptq && gptqSupports(*m->scheme);
        if (!gptq && !m->rounding->needsHessian()) {
            if (options.gptq) {
                result.m_skipped.push_back(m->name);
            }
            continue;
        }
        const auto* weight = source->find(m->weightTensor);
        if (!weight || weight->info.shape.size() != 2 || !isQuantizableFloat(weight->info.dtype)) {
            throw ExportError("planned weight '" + m->weightTensor + "' is not a 2-D BF16/F16/F32 tensor");
        }
        if (!m->rounding->needsHessian()) {
            searchedOnWeight.push_back(targets.size());
            requests.push_back({weight, m->scheme, m->rounding, m->vllmName});
        }
        targets.push_back({m, weight, gptq, nullptr});
    }
    if (targets.empty()) {
        throw ExportError(options.gptq
                              ? "GPTQ: no quantized module uses an integer scheme (W4A16, W4A16_ASYM, "
                                "W8A16, ...)"
                              : "no quantized module has a rounding that needs a capture (hessian)");
    }
    const auto contexts = moduleContexts(*source, requests, threads);
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (!contexts[i].error.empty()) {
            throw ExportError(contexts[i].error);
        }
        targets[searchedOnWeight[i]].ranges = contexts[i].context.ranges;
    }

    const auto targetPath = options.target.empty() ? targetBesideCapture(options.capture) : options.target;
    const auto target =
        targetPath.empty() ? nullptr : std::make_shared<const Checkpoint>(Checkpoint::open(targetPath));
    const auto capture = openCaptureFor(options.capture, options.captureOptions, *source, target.get());
    auto spec = readDraftSpec(*source);
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
    // Each pass's modules are calibrated one at a time; GPTQ's lazily, while the pass's file is written.
    // The pass's Hessians are dropped before the next pass.
    captureOptions.onPass = [&](std::map<std::string, std::vector<HessianSlice>>&& hessians) {
        ++result.m_passes;
        std::vector<PlannedTensor> tensors;
        std::vector<Target*> solved;
        for (auto& [name, slices] : hessians) {
            auto* t = byName.at(name);
            std::int64_t tokens = 0;
            for (const auto& slice : slices) {
                tokens += slice.tokens;
            }
            auto calibrate = [&, t, slices = &slices, tokens]() {
                const auto start = Clock::now();
                CalibratedModuleReport report{t->module->name, tokens};
                auto q = calibrateModule(source, *t, *slices, options.solver, threads, report);
                result.m_modules.push_back(std::move(report));
                result.m_solveSeconds += secondsSince(start);
                if (!reportProgress(options.progress, done, total)) {
                    throw IoError(IoErrorKind::Cancelled, t->module->name, "cancelled");
                }
                return q;
            };
            if (!t->gptq) { // the source weight, under the ranges chosen now
                calibrate();
                result.m_weights.modules[t->module->name] = {source, SchemeContext{1.0f, t->ranges, false}};
                continue;
            }
            solved.push_back(t);
            const auto& info = t->weight->info;
            tensors.push_back(
                {{info.name, info.dtype, info.shape}, [calibrate, dtype = info.dtype](ByteSink& sink) {
                     const auto bytes = toDTypeBytes(dtype, *calibrate());
                     sink.write(std::span<const std::byte>(bytes));
                 }});
        }
        if (tensors.empty()) {
            return;
        }
        const auto folder = result.m_temp->path() / ("pass-" + std::to_string(result.m_passes));
        fs::create_directories(folder);
        writeSafetensorsShards(folder, std::move(tensors));
        const auto file = std::make_shared<const Checkpoint>(Checkpoint::open(folder));
        for (const auto* t : solved) {
            result.m_weights.modules[t->module->name] = {file, SchemeContext{1.0f, t->ranges, false}};
        }
    };
    const auto hessians = captureHessians(draft, capture, names, captureOptions);
    result.m_hessianSeconds = hessians.seconds - result.m_solveSeconds;
    result.m_samples = hessians.samples;
    result.m_anchors = hessians.anchors;
    for (const auto& t : targets) {
        if (!result.m_weights.modules.contains(t.module->name)) {
            throw ExportError("no captured input reaches '" + t.module->name +
                              "' (the draft's forward never applies it to the capture)");
        }
    }
    for (auto& group : plan.groups) {
        group.gptq = options.gptq && gptqSupports(*group.scheme);
    }
    return result;
}

} // namespace spark
