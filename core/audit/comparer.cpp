#include "core/audit/comparer.h"

#include "core/audit/reencodecheck.h"
#include "core/io/floatconv.h"
#include "core/io/ioerror.h"
#include "core/plan/draftlayout.h"
#include "core/quant/modulecontexts.h"
#include "core/quant/quanterror.h"
#include "core/quant/rowchunks.h"
#include "core/quant/schemecodec.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

namespace spark {
namespace {

/// Σ(w − d)², Σw², max |w − d| in float64 (schemes-spec §8's rel_err).
struct ErrorSums
{
    double sqErr = 0;
    double sqNorm = 0;
    double maxAbs = 0;
    std::uint64_t nonFinite = 0;

    void add(const float* w, const float* d, std::size_t n)
    {
        for (std::size_t i = 0; i < n; ++i) {
            if (!std::isfinite(d[i])) {
                ++nonFinite;
                continue;
            }
            const double e = static_cast<double>(w[i]) - static_cast<double>(d[i]);
            sqErr += e * e;
            sqNorm += static_cast<double>(w[i]) * static_cast<double>(w[i]);
            maxAbs = std::max(maxAbs, std::fabs(e));
        }
    }
    void finish(ModuleComparison& c) const
    {
        c.nonFinite = nonFinite;
        if (nonFinite == 0 && sqNorm > 0) {
            c.relErr = std::sqrt(sqErr) / std::sqrt(sqNorm);
        }
        if (nonFinite == 0) {
            c.maxAbsErr = maxAbs;
        }
    }
};

/// Throws std::invalid_argument when @p output cannot be a quantization of @p source.
void requireRelated(const Checkpoint& source, const QuantizedCheckpoint& sourceView, const Checkpoint& output,
                    const QuantizedCheckpoint& outputView)
{
    const auto refuse = [&](const std::string& why) {
        throw std::invalid_argument("'" + output.folder().string() + "' is not a quantization of '" +
                                    source.folder().string() + "': " + why);
    };
    const auto& sa = sourceView.architecture;
    const auto& oa = outputView.architecture;
    if (sa.traits().known && oa.traits().known && sa.kind != oa.kind) {
        refuse("the source is a " + sa.displayName + " draft, the output a " + oa.displayName + " draft");
    }
    std::size_t weighted = 0;
    for (const auto& om : outputView.modules) {
        if (!om.quantizedOnDisk && om.module.outFeatures == 0) {
            continue;
        }
        ++weighted;
        const auto* sm = sourceView.find(om.module.name);
        if (sm && sm->module.outFeatures == om.module.outFeatures &&
            sm->module.inFeatures == om.module.inFeatures) {
            return;
        }
    }
    if (weighted > 0) {
        refuse("no module of the output matches a source module by name and weight shape");
    }
}

} // namespace

std::string_view bitExactnessName(BitExactness value)
{
    switch (value) {
    case BitExactness::Yes:
        return "yes";
    case BitExactness::No:
        return "no";
    case BitExactness::NotChecked:
        break;
    }
    return "n/a";
}

std::size_t CompareReport::quantizedModules() const
{
    return static_cast<std::size_t>(std::count_if(
        modules.begin(), modules.end(), [](const ModuleComparison& m) { return m.quantizedInOutput; }));
}

std::size_t CompareReport::bitExactModules() const
{
    return static_cast<std::size_t>(
        std::count_if(modules.begin(), modules.end(),
                      [](const ModuleComparison& m) { return m.bitExact == BitExactness::Yes; }));
}

bool CompareReport::ok() const
{
    return differingTensors.empty() && missingTensors.empty() && extraTensors.empty() &&
           std::none_of(modules.begin(), modules.end(),
                        [](const ModuleComparison& m) { return m.bitExact == BitExactness::No; });
}

std::string CompareReport::summary() const
{
    const auto notChecked = std::count_if(modules.begin(), modules.end(), [](const ModuleComparison& m) {
        return m.quantizedInOutput && m.bitExact == BitExactness::NotChecked;
    });
    return "compare: " + std::to_string(quantizedModules()) + " quantized modules, " +
           std::to_string(bitExactModules()) + " bit-exact" +
           (notChecked ? ", " + std::to_string(notChecked) + " not checkable" : std::string()) + "; " +
           std::to_string(differingTensors.size()) + " copied tensors differ, " +
           std::to_string(missingTensors.size()) + " missing, " + std::to_string(extraTensors.size()) +
           " unexpected";
}

CompareReport compareCheckpoints(const Checkpoint& source, const Checkpoint& output,
                                 const CompareOptions& options)
{
    CompareReport report;
    const auto sourceView = recogniseCheckpoint(source, options.targetLayers);
    const auto outputView = recogniseCheckpoint(output, options.targetLayers);
    requireRelated(source, sourceView, output, outputView);
    const unsigned threads = resolveThreads(static_cast<int>(options.threads));
    const auto cpu = options.backend ? nullptr : makeBackend(Backend::Cpu);
    const QuantBackend& backend = options.backend ? *options.backend : *cpu;

    // The searched ranges and NVFP4's global scale per fused set, as the exporter computes them.
    std::vector<ContextRequest> requests;
    std::map<std::string, std::size_t> requestOf; // by module name
    for (const auto& om : outputView.modules) {
        const auto* sm = sourceView.find(om.module.name);
        const auto* weight = sm && !sm->quantizedOnDisk ? source.find(sm->module.weightTensor) : nullptr;
        if (om.productScheme && om.productScheme->quantizes() && om.rounding && !om.gptq && weight &&
            weight->info.shape.size() == 2 && isQuantizableFloat(weight->info.dtype) &&
            weight->info.shape == std::vector<std::uint64_t>{om.module.outFeatures, om.module.inFeatures}) {
            requestOf[om.module.name] = requests.size();
            const auto* scale =
                om.rounding->needsHessian() ? output.find(om.module.name + ".weight_scale") : nullptr;
            requests.push_back({weight, om.productScheme, om.rounding, om.module.vllmName, &output, scale});
        }
    }
    // A NaN/Inf weight or a shape the search refuses becomes that module's detail below.
    const auto contexts = moduleContexts(source, requests, threads);

    std::set<std::string> replacedSource;
    std::set<std::string> accounted;
    std::uint64_t done = 0;
    std::uint64_t total = 0;
    for (const auto& sm : sourceView.modules) {
        total += sm.weightBytes;
    }
    for (const auto& om : outputView.modules) {
        const auto* sm = sourceView.find(om.module.name);
        if (!om.quantizedOnDisk && (!sm || !sm->quantizedOnDisk) && om.module.outFeatures == 0) {
            continue; // norms, buffers: byte comparison below
        }
        ModuleComparison c;
        c.module = om.module.name;
        c.outputScheme = om.scheme;
        c.quantizedInOutput = om.quantizedOnDisk;
        c.outputBytes = om.weightBytes;
        c.outputBitsPerWeight = om.bitsPerWeight;
        if (!sm) {
            c.inSource = false;
            c.detail = "not in the source: nothing to compare it with";
            report.modules.push_back(std::move(c));
            continue;
        }
        c.sourceScheme = sm->scheme;
        c.quantizedInSource = sm->quantizedOnDisk;
        c.sourceBytes = sm->weightBytes;
        if (c.quantizedInOutput != c.quantizedInSource) {
            (c.quantizedInOutput ? report.quantizedOnlyInOutput : report.quantizedOnlyInSource)
                .push_back(c.module);
        }
        if (!om.quantizedOnDisk && !sm->quantizedOnDisk) {
            report.modules.push_back(std::move(c)); // copies: checked tensor by tensor below
            continue;
        }
        if (om.quantizedOnDisk) {
            for (const auto& t : output.tensors()) {
                if (moduleOfTensor(t.info.name) == om.module.name &&
                    (isQuantizedTensorSuffix(t.info.name.substr(om.module.name.size() + 1)) ||
                     t.info.name == om.module.name + ".weight")) {
                    accounted.insert(t.info.name);
                }
            }
        }
        const auto* weight = sm->quantizedOnDisk ? nullptr : source.find(sm->module.weightTensor);
        replacedSource.insert(sm->module.weightTensor);
        if (sm->quantizedOnDisk) {
            c.detail = "the source is quantized too: compared dequantized, not re-encoded";
        } else if (!weight || weight->info.shape.size() != 2 || !isQuantizableFloat(weight->info.dtype)) {
            c.detail = "no 2-D BF16/F16/F32 source weight";
            report.modules.push_back(std::move(c));
            continue;
        } else if (weight->info.shape !=
                   std::vector<std::uint64_t>{om.module.outFeatures, om.module.inFeatures}) {
            c.bitExact = BitExactness::No;
            c.detail = "the output describes a [" + std::to_string(om.module.outFeatures) + ", " +
                       std::to_string(om.module.inFeatures) + "] weight, the source has " +
                       weight->info.shapeText();
            report.modules.push_back(std::move(c));
            continue;
        }
        if (om.quantizedOnDisk && !om.decodable()) {
            c.bitExact = BitExactness::No;
            c.detail = om.layout.issues.empty()
                           ? "its tensors fit no config group"
                           : om.layout.issues.front().rule + ": " + om.layout.issues.front().message;
            report.modules.push_back(std::move(c));
            continue;
        }
        const auto rows = static_cast<std::size_t>(om.module.outFeatures);
        const auto cols = static_cast<std::size_t>(om.module.inFeatures);
        std::unique_ptr<ReencodeCheck> exact;
        c.rounding = om.rounding ? std::string(om.rounding->name) : std::string();
        const auto request = requestOf.find(om.module.name);
        if (weight && om.gptq) {
            c.detail = "GPTQ codes, solved from a capture: only its error is measured";
        } else if (weight && om.productScheme && om.productScheme->quantizes() && !om.rounding) {
            c.detail = "its config group's observer records a rounding Sparkulator does not recompute: only "
                       "its error is measured";
        } else if (request != requestOf.end() && !contexts[request->second].error.empty()) {
            c.detail = contexts[request->second].error;
        } else if (request != requestOf.end()) {
            exact = std::make_unique<ReencodeCheck>(output, om.module.name, *om.productScheme, *om.rounding,
                                                    weight->info, contexts[request->second].context);
        } else if (weight) {
            c.detail = om.scheme + " is not a scheme Sparkulator encodes: only its error is measured";
        }
        const auto decoder = makeDecoder(output, outputView, om);
        const auto sourceDecoder = sm->quantizedOnDisk ? makeDecoder(source, sourceView, *sm) : nullptr;
        const std::size_t alignment = std::max<std::size_t>(
            {decoder ? decoder->rowAlignment() : 1, sourceDecoder ? sourceDecoder->rowAlignment() : 1,
             om.productScheme && om.productScheme->codec() ? om.productScheme->codec()->rowAlignment() : 1});
        ErrorSums sums;
        std::vector<float> w;
        std::vector<float> d;
        try {
            if (weight) {
                RowChunkReader reader(source, *weight, kChunkBytes, alignment);
                while (const auto block = reader.next()) {
                    w.resize(block->rowCount * cols);
                    toFloat(block->dtype, block->data, w.size(), w.data());
                    d.resize(w.size());
                    decoder->decode(block->firstRow, block->rowCount, d.data());
                    sums.add(w.data(), d.data(), w.size());
                    if (exact) {
                        exact->block(*block, backend, threads);
                    }
                    done += block->rowCount * cols * block->elementBytes();
                    if (!reportProgress(options.progress, done, total)) {
                        throw IoError(IoErrorKind::Cancelled, output.folder().string(), "compare cancelled");
                    }
                }
            } else if (sourceDecoder && sourceDecoder->rows() == rows && sourceDecoder->cols() == cols) {
                const std::size_t step =
                    std::max<std::size_t>(alignment, (std::size_t{1} << 20) / std::max<std::size_t>(cols, 1) /
                                                         alignment * alignment);
                for (std::size_t r = 0; r < rows; r += step) {
                    const auto n = std::min(step, rows - r);
                    w.resize(n * cols);
                    d.resize(n * cols);
                    sourceDecoder->decode(r, n, w.data());
                    if (decoder) {
                        decoder->decode(r, n, d.data());
                    } else {
                        d = moduleWeightValues(output, outputView, om, r, n);
                    }
                    sums.add(w.data(), d.data(), w.size());
                }
            }
        } catch (const std::invalid_argument& e) {
            c.detail = e.what();
        }
        sums.finish(c);
        if (exact) {
            using State = ReencodeCheck::State;
            c.bitExact = exact->state() == State::Matching  ? BitExactness::Yes
                         : exact->state() == State::Differs ? BitExactness::No
                                                            : BitExactness::NotChecked;
            if (!exact->matching() && c.detail.empty()) {
                c.detail = exact->problem();
            }
        }
        report.modules.push_back(std::move(c));
    }

    for (const auto& tensor : source.tensors()) {
        if (replacedSource.contains(tensor.info.name)) {
            continue;
        }
        const auto* copy = output.find(tensor.info.name);
        if (!copy) {
            report.missingTensors.push_back(tensor.info.name);
            continue;
        }
        accounted.insert(tensor.info.name);
        if (!sameTensor(source, tensor, output, *copy)) {
            report.differingTensors.push_back(tensor.info.name);
        }
    }
    for (auto& c : report.modules) {
        for (const auto& t : report.differingTensors) {
            if (moduleOfTensor(t) == c.module) {
                c.differingCopies.push_back(t);
            }
        }
        if (c.inSource && !c.quantizedInOutput && !c.quantizedInSource) {
            const bool differs = !c.differingCopies.empty();
            if (!differs) {
                c.relErr = 0.0;
                c.maxAbsErr = 0.0;
            } else {
                c.detail = "stored BF16 in both, but not byte-identical";
            }
        }
    }
    for (const auto& tensor : output.tensors()) {
        if (!accounted.contains(tensor.info.name)) {
            report.extraTensors.push_back(tensor.info.name);
        }
    }
    return report;
}

} // namespace spark
