#include "core/plan/draftmodule.h"

namespace spark {

std::string_view roleName(ModuleRole role)
{
    switch (role) {
    case ModuleRole::Linear:
        return "linear";
    case ModuleRole::Norm:
        return "norm";
    case ModuleRole::Embedding:
        return "embedding";
    case ModuleRole::Head:
        return "head";
    case ModuleRole::Buffer:
        return "buffer";
    }
    return "buffer";
}

} // namespace spark
