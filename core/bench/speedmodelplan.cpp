#include "core/bench/speedmodelplan.h"

namespace spark {

std::optional<DrafterKind> drafterKindOf(DraftArchitecture architecture)
{
    const auto& traits = traitsOf(architecture);
    if (!traits.known) {
        return std::nullopt;
    }
    return traits.blockDraft ? DrafterKind::Block : DrafterKind::Chain;
}

void applyPlan(SpeedModelOptions& options, const QuantPlan& plan, bool kindGiven)
{
    options.streamedBefore = plan.sizes.streamedBefore;
    options.streamedAfter = plan.sizes.streamedAfter;
    if (kindGiven) {
        return;
    }
    if (const auto kind = drafterKindOf(plan.architecture.kind)) {
        options.kind = *kind;
        options.kindBasis = plan.architecture.displayName + " architecture";
    } else {
        options.kind = DrafterKind::Chain;
        options.kindBasis = "assumed: the architecture (" + plan.architecture.displayName + ") does not say";
    }
}

} // namespace spark
