#include "core/plan/ignorelist.h"

#include "core/plan/entrypreview.h"
#include "core/plan/nameregex.h"
#include "core/plan/vllmmatching.h"

#include <algorithm>
#include <map>

namespace spark {
namespace {

/// A vLLM layer name and whether the ignore list must select it.
struct Expectation
{
    std::string layer;
    bool ignored = false;
    std::string module;
};

/// Every verdict @p entries give on @p expectations under both mappings; the first mismatch, or "".
std::string check(const std::vector<std::string>& entries, const std::vector<Expectation>& expectations)
{
    const auto compiled = compileEntries(entries);
    for (const auto& e : compiled) {
        if (!e.isValid()) {
            return e.errorMessage();
        }
    }
    static const FusedMapping empty;
    for (const FusedMapping* mapping : {&empty, &standardFusedMapping()}) {
        for (const auto& x : expectations) {
            const auto d = shouldIgnoreLayer(x.layer, compiled, *mapping);
            if (!d.error.empty()) {
                return d.error;
            }
            if (d.ignored != x.ignored) {
                return "generated ignore list " + std::string(d.ignored ? "selects" : "misses") + " " +
                       x.layer + " (" + x.module + ")" +
                       (mapping == &empty ? "" : " with packed_modules_mapping");
            }
        }
    }
    return {};
}

} // namespace

IgnoreList buildIgnoreList(const std::vector<PlannedModule>& modules)
{
    // One expectation per vLLM layer name (fused units appear once per shard module: dedupe).
    std::vector<Expectation> expectations;
    std::map<std::string, bool> seen;
    std::vector<const PlannedModule*> kept;
    for (const auto& m : modules) {
        if (!m.isLinear() || seen.count(m.vllmName)) {
            continue;
        }
        seen[m.vllmName] = true;
        const bool ignored = m.decision == PlanDecision::Keep;
        expectations.push_back({m.vllmName, ignored, m.name});
        for (const auto& alias : m.vllmAliases) {
            expectations.push_back({alias, ignored, m.name});
        }
        if (ignored) {
            kept.push_back(&m);
        }
    }

    IgnoreList list;
    // lm_head is kept unless a scheme rule quantized it (through the exact target "lm_head").
    if (std::none_of(modules.begin(), modules.end(), [](const PlannedModule& m) {
            return m.vllmName == "lm_head" && m.decision == PlanDecision::Quantize;
        })) {
        list.entries.push_back("lm_head");
    }
    auto add = [&list](const std::string& entry) {
        if (std::find(list.entries.begin(), list.entries.end(), entry) == list.entries.end()) {
            list.entries.push_back(entry);
        }
    };
    std::vector<Expectation> quantized;
    std::copy_if(expectations.begin(), expectations.end(), std::back_inserter(quantized),
                 [](const Expectation& x) { return !x.ignored; });
    for (const auto* m : kept) {
        // Layered modules repeat across layers: one leaf entry covers them all when no quantized Linear
        // shares the leaf. Single modules (fc, confidence_head.proj) get their full path: clearer to read.
        if (m->vllmName.find(".layers.") != std::string::npos) {
            const auto broad = nameregex::leafEntry(m->vllmName);
            if (std::find(list.entries.begin(), list.entries.end(), broad) != list.entries.end()) {
                continue;
            }
            if (check({broad}, quantized).empty()) {
                add(broad);
                continue;
            }
        }
        add(nameregex::exactEntry(m->vllmName));
        for (const auto& alias : m->vllmAliases) {
            add(nameregex::exactEntry(alias));
        }
    }
    // Heads and embeddings are not Linears ("Linear" never selects them), but newer vLLM asks for a scheme
    // for ParallelLMHead too; listing them is harmless and matches llm-compressor's habit (format-spec §5.6).
    for (const auto& m : modules) {
        if ((m.role == ModuleRole::Head || m.role == ModuleRole::Embedding) && m.vllmName != "lm_head" &&
            !m.weightTensor.empty()) {
            add(nameregex::exactEntry(m.vllmName));
        }
    }
    list.error = check(list.entries, expectations);
    return list;
}

} // namespace spark
