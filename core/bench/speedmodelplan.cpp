#include "core/bench/speedmodelplan.h"

namespace spark {

std::optional<DrafterKind> drafterKindOf(DraftArchitecture architecture)
{
    switch (architecture) {
    case DraftArchitecture::Eagle3:
        return DrafterKind::Chain;
    case DraftArchitecture::LagunaDFlash:
    case DraftArchitecture::Qwen3DFlash:
    case DraftArchitecture::DSpark:
        return DrafterKind::Block;
    case DraftArchitecture::Generic:
        break;
    }
    return std::nullopt;
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
