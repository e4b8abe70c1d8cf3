#include "core/forward/draftweights.h"

#include "core/audit/quantizedmodule.h"
#include "core/forward/draftspec.h"
#include "core/io/floatconv.h"
#include "core/quant/modulecontexts.h"

#include <algorithm>
#include <cstring>

namespace spark {
namespace {

/// Module names with and without the "model." prefix some checkpoints carry.
std::string bareName(const std::string& name)
{
    return name.starts_with("model.") ? name.substr(6) : name;
}

/// Each quantized module's codec context exactly as the exporter computes it (moduleContexts): the searched
/// ranges of its rounding method and NVFP4's global scale of its fused set.
std::map<std::string, SchemeContext> planContexts(const Checkpoint& draft, const QuantPlan& plan,
                                                  const std::vector<const PlannedModule*>& modules)
{
    std::vector<ContextRequest> requests;
    for (const auto* m : modules) {
        const auto* tensor = draft.find(m->weightTensor);
        if (tensor == nullptr) {
            throw ForwardInputError(draft.folder().string(), m->weightTensor, "missing from the draft");
        }
        requests.push_back({tensor, m->scheme, m->rounding, m->vllmName});
    }
    // NVFP4's global scale covers the whole fused set, also when only one of its modules is asked for.
    for (const auto* m : plan.quantizedModules()) {
        if (std::find(modules.begin(), modules.end(), m) == modules.end() &&
            m->scheme->codec()->usesGlobalScale()) {
            for (const auto* asked : modules) {
                if (asked->vllmName == m->vllmName) {
                    requests.push_back({draft.find(m->weightTensor), m->scheme, m->rounding, m->vllmName});
                    break;
                }
            }
        }
    }
    const auto contexts = moduleContexts(draft, requests, 0);
    std::map<std::string, SchemeContext> out;
    for (std::size_t i = 0; i < modules.size(); ++i) {
        if (!contexts[i].error.empty()) {
            throw ForwardInputError(draft.folder().string(), modules[i]->weightTensor, contexts[i].error);
        }
        out[modules[i]->name] = contexts[i].context;
    }
    return out;
}

} // namespace

DraftWeights::DraftWeights(std::shared_ptr<const Checkpoint> draft, std::shared_ptr<const Checkpoint> target)
    : m_draft(std::move(draft)), m_target(std::move(target))
{
}

void DraftWeights::applyPlan(const QuantPlan& plan)
{
    std::vector<std::string> all;
    for (const auto* m : plan.quantizedModules()) {
        all.push_back(m->name);
    }
    applyPlan(plan, all);
}

void DraftWeights::applyPlan(const QuantPlan& plan, const std::vector<std::string>& modules)
{
    std::vector<const PlannedModule*> chosen;
    for (const auto& name : modules) {
        const auto* m = plan.findModule(name);
        if (m != nullptr && m->decision == PlanDecision::Quantize) {
            chosen.push_back(m);
        }
    }
    const auto contexts = planContexts(*m_draft, plan, chosen);
    for (const auto* m : chosen) {
        m_overrides[bareName(m->name)] = keptIfSmall(
            planQuantizedLinear(m_draft, *m_draft->find(m->weightTensor), *m->scheme, contexts.at(m->name)));
        m_overrideNames[bareName(m->name)] =
            std::string(m->scheme->name) + " " + std::string(m->rounding->name) + " in memory";
    }
}

std::shared_ptr<const LinearSource> DraftWeights::keptIfSmall(std::shared_ptr<const LinearSource> source)
{
    const auto floats = source->rows() * source->cols();
    if (floats > m_memoryBudgetFloats) {
        return source; // large weights stay streamed: memory holds tiles, never a whole weight in FP32
    }
    m_memoryBudgetFloats -= floats;
    return memoized(std::move(source));
}

void DraftWeights::decodeQuantizedModules()
{
    const auto view = recogniseCheckpoint(*m_draft);
    for (const auto& module : view.modules) {
        if (!module.quantizedOnDisk) {
            continue;
        }
        std::shared_ptr<const ModuleDecoder> decoder = makeDecoder(*m_draft, view, module);
        if (!decoder) {
            throw ForwardInputError(m_draft->folder().string(), module.module.name,
                                    "is quantized in a layout Sparkulator cannot dequantize (" +
                                        module.scheme + ")");
        }
        m_overrides[bareName(module.module.name)] =
            keptIfSmall(decodedLinear(m_draft, decoder, module.module.name));
        m_overrideNames[bareName(module.module.name)] = module.scheme + " from the checkpoint";
    }
}

DraftWeights::Located DraftWeights::locate(const std::string& tensor) const
{
    for (const auto& name : {tensor, "model." + tensor}) {
        if (const auto* t = m_draft->find(name)) {
            return {m_draft, t};
        }
    }
    if (m_target) {
        std::vector<std::string> names{"model." + tensor, tensor};
        if (tensor == "lm_head.weight") {
            names = {"lm_head.weight", "model.embed_tokens.weight"}; // tied embeddings share the table
        }
        for (const auto& name : names) {
            if (const auto* t = m_target->find(name)) {
                return {m_target, t};
            }
        }
    }
    return {};
}

bool DraftWeights::hasLinear(const std::string& module) const
{
    return m_overrides.contains(bareName(module)) || locate(module + ".weight").tensor != nullptr;
}

std::shared_ptr<const LinearSource> DraftWeights::linear(const std::string& module) const
{
    if (const auto it = m_overrides.find(bareName(module)); it != m_overrides.end()) {
        return it->second;
    }
    const auto found = locate(module + ".weight");
    if (found.tensor == nullptr) {
        const bool shared = module == "embed_tokens" || module == "lm_head";
        throw ForwardInputError(
            m_draft->folder().string(), module + ".weight",
            shared && !m_target
                ? "missing: the draft shares it with its target model, so give the target's checkpoint "
                  "(--target-model in the CLI, the Target field in the app)"
                : "missing from the draft" + std::string(m_target ? " and the target" : ""));
    }
    return storedLinear(found.checkpoint, *found.tensor);
}

std::vector<float> DraftWeights::vector(const std::string& tensor) const
{
    const auto found = locate(tensor);
    if (found.tensor == nullptr) {
        throw ForwardInputError(m_draft->folder().string(), tensor, "missing from the draft");
    }
    const auto& info = found.tensor->info;
    if (!canConvertToFloat(info.dtype)) {
        throw ForwardInputError(found.checkpoint->fileNameOf(*found.tensor), tensor, "is not a float tensor");
    }
    std::vector<float> out(info.numel());
    toFloat(info.dtype, found.checkpoint->bytes(*found.tensor).data(), out.size(), out.data());
    return out;
}

std::vector<std::int64_t> DraftWeights::integers(const std::string& tensor) const
{
    const auto found = locate(tensor);
    if (found.tensor == nullptr) {
        throw ForwardInputError(m_draft->folder().string(), tensor, "missing from the draft");
    }
    const auto& info = found.tensor->info;
    const auto bytes = found.checkpoint->bytes(*found.tensor);
    std::vector<std::int64_t> out(info.numel());
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (info.dtype == DType::I64) {
            std::memcpy(&out[i], bytes.data() + 8 * i, 8);
        } else if (info.dtype == DType::I32) {
            std::int32_t v;
            std::memcpy(&v, bytes.data() + 4 * i, 4);
            out[i] = v;
        } else {
            throw ForwardInputError(found.checkpoint->fileNameOf(*found.tensor), tensor,
                                    "must be I64 or I32");
        }
    }
    return out;
}

} // namespace spark
