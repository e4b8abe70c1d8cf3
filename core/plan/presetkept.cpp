#include "core/plan/presetkept.h"

namespace spark {

std::map<std::string, std::string> presetKeptModules(const QuantPlan& plan)
{
    std::map<std::string, std::string> kept;
    for (const auto& entry : plan.entries) {
        if (entry.kind != EntryKind::Ignore || !entry.source.starts_with("preset")) {
            continue;
        }
        for (const auto& match : entry.matches) {
            const auto* module = plan.findModule(match.module);
            if (module && module->decision != PlanDecision::Quantize) {
                kept.emplace(match.module, entry.entry);
            }
        }
    }
    return kept;
}

} // namespace spark
