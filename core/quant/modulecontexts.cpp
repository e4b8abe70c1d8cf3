#include "core/quant/modulecontexts.h"

#include "core/io/floatconv.h"
#include "core/io/ioerror.h"
#include "core/quant/quanterror.h"
#include "core/quant/roundingsearch.h"
#include "core/quant/rowchunks.h"
#include "core/quant/storedranges.h"

#include <algorithm>
#include <map>
#include <optional>

namespace spark {

std::vector<ModuleContext> moduleContexts(const Checkpoint& source,
                                          const std::vector<ContextRequest>& requests, unsigned threads,
                                          const ProgressFn& progress)
{
    std::vector<ModuleContext> out(requests.size());
    std::vector<std::optional<float>> absmax(requests.size()); // of the range each codec will see
    std::uint64_t total = 0;
    for (const auto& r : requests) {
        const bool searches = r.rounding && r.rounding->searches();
        if (searches || r.scheme->codec()->usesGlobalScale()) {
            total += r.weight->info.byteSize();
        }
    }
    std::uint64_t done = 0;
    auto advance = [&](std::uint64_t bytes) {
        done += bytes;
        if (!reportProgress(progress, done, total)) {
            throw IoError(IoErrorKind::Cancelled, source.folder().string(), "cancelled");
        }
    };
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const auto& r = requests[i];
        const bool searches = r.rounding && r.rounding->searches();
        if (!searches && !r.scheme->codec()->usesGlobalScale()) {
            continue;
        }
        const auto& info = r.weight->info;
        try {
            RowChunkReader reader(source, *r.weight);
            if (searches && r.rounding->needsHessian() && r.storedScale) {
                if (!canConvertToFloat(r.storedScale->info.dtype)) {
                    throw QuantError(QuantErrorKind::StoredMismatch,
                                     r.storedScale->info.name + " is not a float tensor");
                }
                std::vector<float> scales(r.storedScale->info.numel());
                const auto bytes = r.storedIn->bytes(*r.storedScale);
                toFloat(r.storedScale->info.dtype, bytes.data(), scales.size(), scales.data());
                StoredRangeMatch match(*r.rounding, *r.scheme, info.shape.at(0), info.shape.at(1), info.dtype,
                                       std::move(scales));
                while (const auto rows = reader.next()) {
                    match.addRows(*rows);
                    advance(rows->rowCount * rows->cols * rows->elementBytes());
                }
                out[i].context.ranges = match.finish();
                absmax[i] = out[i].context.ranges->absmax;
            } else if (searches) {
                RangeSearch search(*r.rounding, *r.scheme, info.shape.at(0), info.shape.at(1), info.dtype);
                while (const auto rows = reader.next()) {
                    search.addRows(*rows, threads);
                    advance(rows->rowCount * rows->cols * rows->elementBytes());
                }
                out[i].context.ranges = search.finish();
                absmax[i] = out[i].context.ranges->absmax;
            } else {
                absmax[i] = reader.absmax();
                advance(info.byteSize());
            }
        } catch (const QuantError& e) {
            out[i].error = source.fileOf(*r.weight).path().string() + ": " + e.what();
        }
    }
    // NVFP4: one global scale per fused set, from every member's (possibly shrunk) statistics.
    std::map<std::string, float> setAbsmax;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (absmax[i] && !requests[i].fusedSet.empty()) {
            auto& best = setAbsmax[requests[i].fusedSet];
            best = std::max(best, *absmax[i]);
        }
    }
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const auto& r = requests[i];
        if (!absmax[i] || !r.scheme->codec()->usesGlobalScale()) {
            continue;
        }
        const float a = r.fusedSet.empty() ? *absmax[i] : setAbsmax[r.fusedSet];
        auto ranges = std::move(out[i].context.ranges);
        out[i].context = r.scheme->codec()->contextForAbsmax(r.weight->info.dtype, a);
        out[i].context.ranges = std::move(ranges);
    }
    for (std::size_t i = 0; i < requests.size(); ++i) {
        out[i].context.scaleCodeSearch = requests[i].rounding && requests[i].rounding->scaleCodeSearch;
    }
    return out;
}

} // namespace spark
