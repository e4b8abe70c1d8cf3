#include "core/bench/speedmodelresult.h"

namespace spark {

const char* drafterKindName(DrafterKind kind)
{
    return kind == DrafterKind::Block ? "block" : "chain";
}

std::optional<DrafterKind> parseDrafterKind(std::string_view name)
{
    if (name == "chain") {
        return DrafterKind::Chain;
    }
    if (name == "block") {
        return DrafterKind::Block;
    }
    return std::nullopt;
}

int draftStepsPerCycle(DrafterKind kind, int j)
{
    if (j <= 0) {
        return 0;
    }
    return kind == DrafterKind::Block ? 1 : j;
}

const SpeedModelCell* SpeedModel::cell(const std::string& arm, long long promptLen) const
{
    for (const auto& c : cells) {
        if (c.arm == arm && c.promptLen == promptLen) {
            return &c;
        }
    }
    return nullptr;
}

} // namespace spark
