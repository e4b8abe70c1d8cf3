#include "core/plan/plannedmodule.h"

namespace spark {

std::string_view decisionName(PlanDecision decision)
{
    return decision == PlanDecision::Quantize ? "quantize" : "keep";
}

} // namespace spark
