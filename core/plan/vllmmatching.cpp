#include "core/plan/vllmmatching.h"

#include <algorithm>

namespace spark {
namespace {

/// Python str.replace(old, new): every occurrence, left to right.
std::string replaceAll(std::string text, std::string_view from, std::string_view to)
{
    if (from.empty()) {
        return text;
    }
    std::size_t pos = 0;
    while ((pos = text.find(from, pos)) != std::string::npos) {
        text.replace(pos, from.size(), to);
        pos += to.size();
    }
    return text;
}

/// The fused leaf of @p layer present in @p mapping (`layer_name.split(".")[-1] in fused_mapping`).
const std::vector<std::string>* shardsOf(std::string_view layer, const FusedMapping& mapping,
                                         std::string* leaf)
{
    const auto dot = layer.rfind('.');
    const auto last = dot == std::string_view::npos ? layer : layer.substr(dot + 1);
    const auto it = mapping.find(last);
    if (it == mapping.end()) {
        return nullptr;
    }
    *leaf = it->first;
    return &it->second;
}

std::string pythonList(const std::vector<std::string>& items)
{
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i) {
        out += (i ? ", '" : "'") + items[i] + "'";
    }
    return out + "]";
}

} // namespace

const FusedMapping& standardFusedMapping()
{
    static const FusedMapping mapping{{"qkv_proj", {"q_proj", "k_proj", "v_proj"}},
                                      {"gate_up_proj", {"gate_proj", "up_proj"}}};
    return mapping;
}

std::vector<MatchEntry> compileEntries(const std::vector<std::string>& entries)
{
    std::vector<MatchEntry> compiled;
    compiled.reserve(entries.size());
    for (const auto& e : entries) {
        compiled.emplace_back(e);
    }
    return compiled;
}

int firstMatch(const std::vector<MatchEntry>& entries, std::string_view name)
{
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (entries[i].matches(name)) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

IgnoreDecision shouldIgnoreLayer(std::string_view layer, const std::vector<MatchEntry>& ignore,
                                 const FusedMapping& mapping)
{
    IgnoreDecision decision;
    std::string leaf;
    const auto* shards = shardsOf(layer, mapping, &leaf);
    // `layer_name not in ignore`: a literal list membership test, so a "re:" entry never counts here.
    const bool literallyListed =
        std::any_of(ignore.begin(), ignore.end(), [&](const MatchEntry& e) { return e.text() == layer; });
    if (!shards || literallyListed) {
        decision.entryIndex = firstMatch(ignore, layer);
        decision.ignored = decision.entryIndex >= 0;
        return decision;
    }
    bool first = true;
    for (const auto& shard : *shards) {
        const auto shardName = replaceAll(std::string(layer), leaf, shard);
        const int index = firstMatch(ignore, shardName);
        const bool ignored = index >= 0;
        if (first) {
            decision.ignored = ignored;
            decision.entryIndex = index;
            first = false;
        } else if (ignored != decision.ignored) {
            decision.error = "Found a different quantization schemes for " + pythonList(*shards) + " in " +
                             std::string(layer) + ". vLLM requires all to use the same scheme.";
            return decision;
        }
    }
    return decision;
}

bool matchesTarget(std::string_view layer, std::string_view className, const std::vector<MatchEntry>& targets,
                   const FusedMapping& mapping)
{
    if (firstMatch(targets, layer) >= 0) {
        return true;
    }
    if (std::any_of(targets.begin(), targets.end(),
                    [&](const MatchEntry& e) { return e.matchesClass(className); })) {
        return true;
    }
    std::string leaf;
    const auto* shards = shardsOf(layer, mapping, &leaf);
    if (!shards) {
        return false;
    }
    return std::all_of(shards->begin(), shards->end(), [&](const std::string& shard) {
        return firstMatch(targets, replaceAll(std::string(layer), leaf, shard)) >= 0;
    });
}

IgnoreEvaluation evaluateIgnoreList(const std::vector<std::string>& ignore,
                                    const std::vector<std::string>& layers, const FusedMapping& mapping)
{
    IgnoreEvaluation result;
    const auto compiled = compileEntries(ignore);
    for (const auto& entry : compiled) {
        if (!entry.isValid()) {
            result.invalidEntries.push_back(entry.errorMessage());
        }
    }
    for (const auto& layer : layers) {
        const auto decision = shouldIgnoreLayer(layer, compiled, mapping);
        result.layers.push_back({layer, decision.ignored, decision.error});
    }
    return result;
}

} // namespace spark
