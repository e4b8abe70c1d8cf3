#include "core/quant/roundingmethod.h"

#include "core/quant/schemecodec.h"
#include "core/quant/weightscheme.h"

#include <algorithm>
#include <cctype>

namespace spark {

const std::vector<RoundingMethod>& roundingMethods()
{
    static const std::vector<RoundingMethod> methods = {
        {"rtn", "minmax", "round to nearest under each group's min-max range (compressed-tensors' default)"},
        // llm-compressor's memoryless_mse defaults (maxshrink 0.2, grid 100, norm 2.4, patience 5).
        {"mse", "memoryless_mse",
         "llm-compressor's memoryless_mse observer, bit for bit: 20 shrink steps 1.00..0.81, error sum "
         "|Q(w)-w|^2.4 in the weight dtype, global patience 5",
         20, 100.0, 5, RoundingError::DTypeLp, 2.4, false, true},
        // Sparkulator's wider search: rounding.md §5 measured it below LC's on per-channel schemes, whose
        // groups mostly end at LC's 0.81 bound.
        {"range", "minmax",
         "Sparkulator's range search: 51 shrink steps 1.00..0.50, f32 L2 error, asymmetric ends refined "
         "independently (not an llm-compressor observer)",
         51, 100.0, 0, RoundingError::F32L2, 2.0, true, false},
        // NVFP4 only: a block's scale is one of 126 finite positive E4M3 codes, few enough to try them all.
        {"codes", "minmax",
         "NVFP4A16 only: each 16-weight block's E4M3 scale code searched over all 126 for the least f32 L2 "
         "error, compressed-tensors' global scale and FP4 rounding kept (not an llm-compressor observer)",
         0, 100.0, 0, RoundingError::F32L2, 2.0, false, false, true},
        // range's grid scored by each group's share of the module's output error on a capture: the int4
        // analogue of ModelOpt's Local-Hessian scale search (rounding.md §6). Symmetric integer schemes
        // only, where a stored scale names its candidate, so verify can check it.
        {"hessian", "minmax",
         "symmetric integer schemes, with a capture: 51 shrink steps 1.00..0.50 scored by (Q(w)-w)^T H "
         "(Q(w)-w) "
         "with H the group's block of the captured input Hessian (not an llm-compressor observer)",
         51, 100.0, 0, RoundingError::HessianBlock, 2.0, false, false},
    };
    return methods;
}

const RoundingMethod* findRoundingMethod(std::string_view name)
{
    for (const auto& m : roundingMethods()) {
        if (std::equal(name.begin(), name.end(), m.name.begin(), m.name.end(), [](char a, char b) {
                return std::tolower(static_cast<unsigned char>(a)) ==
                       std::tolower(static_cast<unsigned char>(b));
            })) {
            return &m;
        }
    }
    return nullptr;
}

bool RoundingMethod::appliesTo(const WeightScheme& scheme) const
{
    if (needsHessian()) {
        return scheme.family == SchemeFamily::IntSymmetric;
    }
    return scheme.quantizes() && (!scaleCodeSearch || scheme.codec()->searchesScaleCodes());
}

const RoundingMethod& rtnRounding()
{
    return roundingMethods().front();
}

std::string roundingMethodNames()
{
    std::string names;
    for (const auto& m : roundingMethods()) {
        names += (names.empty() ? "" : ", ") + std::string(m.name);
    }
    return names;
}

} // namespace spark
