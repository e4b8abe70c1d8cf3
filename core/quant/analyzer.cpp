#include "core/quant/analyzer.h"

#include "core/io/ioerror.h"
#include "core/quant/quanterror.h"
#include "core/quant/roundingsearch.h"
#include "core/quant/schemecodec.h"
#include "core/util/parallel.h"

#include <algorithm>

namespace spark {

namespace {

/// Calls @p body with consecutive row blocks of @p tensor read into @p buffer.
template <typename Body>
void forEachBlock(const SafetensorsFile& file, const TensorInfo& tensor, std::size_t chunkBytes,
                  std::vector<std::byte>& buffer, Body&& body)
{
    const auto rows = tensor.shape[0];
    const auto cols = static_cast<std::size_t>(tensor.shape[1]);
    const std::size_t rowBytes = cols * (tensor.dtype == DType::F32 ? 4 : 2);
    const std::size_t blockRows = std::max<std::size_t>(1, chunkBytes / rowBytes);
    for (std::uint64_t first = 0; first < rows; first += blockRows) {
        const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(blockRows, rows - first));
        if (buffer.size() < count * rowBytes) {
            buffer.resize(count * rowBytes);
        }
        file.read(tensor, first * rowBytes, std::span(buffer.data(), count * rowBytes));
        body(WeightRows{tensor.dtype, buffer.data(), count, cols, first, tensor.name},
             (first + count) * rowBytes);
    }
}

/// The context of @p tensor alone: its searched ranges (when the rounding searches) and NVFP4's global
/// scale from its own (shrunk) statistics, whose absmax lands in @p absmax.
SchemeContext ownContext(const SafetensorsFile& file, const TensorInfo& tensor, const WeightScheme& scheme,
                         const RoundingMethod& rounding, std::size_t chunkBytes, unsigned threads,
                         std::vector<std::byte>& buffer, float& absmax)
{
    SchemeContext ctx;
    absmax = 0;
    if (rounding.searches()) {
        RangeSearch search(rounding, scheme, tensor.shape[0], tensor.shape[1], tensor.dtype);
        forEachBlock(file, tensor, chunkBytes, buffer,
                     [&](const WeightRows& rows, std::uint64_t) { search.addRows(rows, threads); });
        ctx.ranges = search.finish();
        absmax = ctx.ranges->absmax;
    } else if (scheme.codec()->usesGlobalScale()) {
        absmax = tensorAbsmax(file, tensor, chunkBytes, buffer);
    }
    if (scheme.codec()->usesGlobalScale()) {
        auto ranges = std::move(ctx.ranges);
        ctx = scheme.codec()->contextForAbsmax(tensor.dtype, absmax);
        ctx.ranges = std::move(ranges);
    }
    ctx.scaleCodeSearch = rounding.scaleCodeSearch;
    return ctx;
}

} // namespace

const RoundingMethod& analyzedRounding(const AnalyzeOptions& options, const std::string& tensor)
{
    const auto it = options.tensorRoundings.find(tensor);
    return it != options.tensorRoundings.end() ? *it->second : *options.rounding;
}

bool isAnalyzable(const TensorInfo& tensor, const WeightScheme& scheme)
{
    const std::string_view name = tensor.name;
    return scheme.quantizes() && tensor.shape.size() == 2 && name.ends_with(".weight") &&
           isQuantizableFloat(tensor.dtype) && tensor.shape[0] > 0 && tensor.shape[1] > 0 &&
           (scheme.groupSize < 0 || tensor.shape[1] % static_cast<std::uint64_t>(scheme.groupSize) == 0);
}

const WeightScheme& analyzedScheme(const AnalyzeOptions& options, const std::string& tensor)
{
    const auto it = options.tensorSchemes.find(tensor);
    return it != options.tensorSchemes.end() ? *it->second : *options.scheme;
}

float tensorAbsmax(const SafetensorsFile& file, const TensorInfo& tensor, std::size_t chunkBytes,
                   std::vector<std::byte>& buffer)
{
    float best = 0;
    forEachBlock(file, tensor, chunkBytes, buffer,
                 [&](const WeightRows& rows, std::uint64_t) { best = std::max(best, weightAbsmax(rows)); });
    return best;
}

TensorErrorStats analyzeTensor(const SafetensorsFile& file, const TensorInfo& tensor,
                               const AnalyzeOptions& options, std::vector<std::byte>& buffer,
                               const ProgressFn& progress, const std::optional<SchemeContext>& context)
{
    const auto& scheme = analyzedScheme(options, tensor.name);
    const auto& rounding = analyzedRounding(options, tensor.name);
    SchemeContext ctx = context.value_or(SchemeContext{});
    if (!context && scheme.quantizes() && (!rounding.isRtn() || scheme.codec()->usesGlobalScale())) {
        float absmax = 0;
        ctx = ownContext(file, tensor, scheme, rounding, options.chunkBytes,
                         resolveThreads(static_cast<int>(options.threads)), buffer, absmax);
    }
    ErrorStatsAccumulator acc(scheme, tensor.shape[0], tensor.shape[1], ctx);
    forEachBlock(file, tensor, options.chunkBytes, buffer, [&](const WeightRows& block, std::uint64_t done) {
        acc.addRows(block, options.threads, options.backend);
        if (!reportProgress(progress, done, tensor.byteSize())) {
            throw IoError(IoErrorKind::Cancelled, file.path().string(), "cancelled", tensor.name);
        }
    });
    return acc.result();
}

std::vector<TensorAnalysis> analyzeCheckpoint(const Checkpoint& checkpoint, const AnalyzeOptions& options,
                                              const ProgressFn& progress)
{
    std::uint64_t total = 0;
    for (const auto& t : checkpoint.tensors()) {
        total += isAnalyzable(t.info, analyzedScheme(options, t.info.name)) ? t.info.byteSize() : 0;
    }
    std::vector<TensorAnalysis> out;
    std::vector<std::byte> buffer;
    // NVFP4 fused sets: every member's context first (its search, or one extra read for the absmax), then
    // the set's global scale from all of them, as the exporter does (modulecontexts.h).
    const unsigned threads = resolveThreads(static_cast<int>(options.threads));
    std::map<std::string, float> setAbsmax;
    std::map<std::string, SchemeContext> memberContexts;
    for (const auto& t : checkpoint.tensors()) {
        const auto& scheme = analyzedScheme(options, t.info.name);
        const auto set = options.fusedSetOf.find(t.info.name);
        if (set != options.fusedSetOf.end() && isAnalyzable(t.info, scheme) &&
            scheme.codec()->usesGlobalScale()) {
            try {
                const auto& rounding = analyzedRounding(options, t.info.name);
                float absmax = 0;
                auto ctx = ownContext(checkpoint.fileOf(t), t.info, scheme, rounding, options.chunkBytes,
                                      threads, buffer, absmax);
                setAbsmax[set->second] = std::max(setAbsmax[set->second], absmax);
                memberContexts[t.info.name] = std::move(ctx);
            } catch (const QuantError&) {
                // The member's own analysis reports its NaN/Inf below.
            }
        }
    }
    std::uint64_t done = 0;
    for (const auto& t : checkpoint.tensors()) {
        const auto& scheme = analyzedScheme(options, t.info.name);
        if (!isAnalyzable(t.info, scheme)) {
            continue;
        }
        TensorAnalysis a{t.info.name,  checkpoint.fileNameOf(t),
                         t.info.dtype, t.info.shape,
                         &scheme,      &analyzedRounding(options, t.info.name),
                         std::nullopt, {}};
        const auto base = done;
        const ProgressFn tensorProgress = [&](std::uint64_t bytes, std::uint64_t) {
            return reportProgress(progress, base + bytes, total);
        };
        std::optional<SchemeContext> context;
        if (const auto set = options.fusedSetOf.find(t.info.name);
            set != options.fusedSetOf.end() && setAbsmax.count(set->second)) {
            context = scheme.codec()->contextForAbsmax(t.info.dtype, setAbsmax[set->second]);
            if (const auto member = memberContexts.find(t.info.name); member != memberContexts.end()) {
                context->ranges = member->second.ranges;
            }
            context->scaleCodeSearch = analyzedRounding(options, t.info.name).scaleCodeSearch;
        }
        try {
            a.stats = analyzeTensor(checkpoint.fileOf(t), t.info, options, buffer, tensorProgress, context);
        } catch (const QuantError& e) {
            a.error = checkpoint.fileOf(t).path().string() + ": " + e.what();
        }
        done += t.info.byteSize();
        out.push_back(std::move(a));
    }
    reportProgress(progress, total, total);
    return out;
}

} // namespace spark
