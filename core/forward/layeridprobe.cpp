#include "core/forward/layeridprobe.h"

#include "core/util/statistics.h"
#include "core/util/textformat.h"

#include <algorithm>
#include <numeric>

namespace spark {
namespace {

std::vector<int> shifted(const std::vector<int>& ids, int shift)
{
    std::vector<int> out;
    for (const int id : ids) {
        out.push_back(id + shift);
    }
    return out;
}

bool holdsAll(const std::vector<int>& ids, const std::vector<int>& wanted)
{
    return std::all_of(wanted.begin(), wanted.end(),
                       [&](int w) { return std::find(ids.begin(), ids.end(), w) != ids.end(); });
}

std::vector<double> firstAccepted(const std::vector<AnchorOutcome>& outcomes)
{
    std::vector<double> out;
    for (const auto& o : outcomes) {
        out.push_back(o.base.accepted >= 1 ? 1.0 : 0.0);
    }
    return out;
}

double mean(const std::vector<double>& v)
{
    return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

} // namespace

std::string layerIdArgument(const std::vector<int>& ids)
{
    std::string out;
    for (const int id : ids) {
        out += (out.empty() ? "" : ",") + std::to_string(id);
    }
    return out;
}

std::optional<LayerIdProbe> probeLayerIds(const DraftForward& draft, const HiddenStateCapture& capture,
                                          const CaptureReadOptions& readOptions,
                                          const AcceptanceOptions& options, std::int64_t anchorCount)
{
    const auto& recorded = capture.info().layerIds;
    const auto& wanted = draft.spec().auxLayerIds;
    std::vector<int> shifts;
    for (const int shift : {-1, 1}) {
        // Read with true id = recorded + shift, the draft's id d sits where d − shift is recorded.
        const auto ids = shifted(recorded, shift);
        if (std::all_of(ids.begin(), ids.end(), [](int id) { return id >= 0; }) && holdsAll(ids, wanted)) {
            shifts.push_back(shift);
        }
    }
    if (shifts.empty()) {
        return std::nullopt;
    }
    AcceptanceOptions probeOptions = options;
    probeOptions.k = 1;
    probeOptions.temperature = 0; // greedy first proposals tell the layer ids apart at any temperature
    probeOptions.progress = nullptr;
    const auto anchors = sampleAnchors(eligibleAnchors(capture, 1), anchorCount, options.seed);
    LayerIdProbe probe;
    probe.anchors = static_cast<std::int64_t>(anchors.size());
    const auto given = firstAccepted(evaluateAnchors(draft, nullptr, capture, anchors, probeOptions));
    probe.readings.push_back({0, recorded, mean(given)});
    for (const int shift : shifts) {
        CaptureReadOptions reread = readOptions;
        reread.layerIds = shifted(recorded, shift);
        const auto other = HiddenStateCapture::open(capture.info().path, reread);
        const auto accepted = firstAccepted(evaluateAnchors(draft, nullptr, other, anchors, probeOptions));
        probe.readings.push_back({shift, reread.layerIds, mean(accepted)});
        std::vector<double> gain(accepted.size());
        std::transform(accepted.begin(), accepted.end(), given.begin(), gain.begin(), std::minus<>());
        const auto interval = pairedMeanInterval(gain);
        if (interval.low > 0 && probe.advice.empty()) {
            probe.advice = "the capture's layer ids look one " +
                           std::string(shift < 0 ? "too high" : "too low") + ": the BF16 draft accepts " +
                           formatFixed(mean(accepted), 3) + " of its first proposals with ids " +
                           layerIdList(reread.layerIds) + " against " + formatFixed(mean(given), 3) +
                           " with " + layerIdList(recorded) + " (" + std::to_string(probe.anchors) +
                           " anchors)";
            probe.suggestedLayerIds = reread.layerIds;
        }
    }
    return probe;
}

} // namespace spark
