#include "core/quant/weightscheme.h"

#include "core/quant/schemecodecs.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace spark {
namespace {

constexpr KernelSupport kIntKernels{"Machete (Marlin for group 32)", "Marlin"};

WeightScheme intScheme(std::string_view name, int bits, int group, std::string_view summary, bool product,
                       KernelSupport kernels = kIntKernels)
{
    return {name, SchemeFamily::IntSymmetric, bits, group, "pack-quantized", summary, kernels, true, product};
}

std::vector<WeightScheme> makeSchemes()
{
    return {
        intScheme("W4A16", 4, 128, "int4 symmetric, one scale per 128 weights (4.125 bits/weight)", true),
        intScheme("W4A16:g32", 4, 32, "int4 symmetric, group 32: lower error, more scales; Marlin only", true,
                  {"Marlin (Machete has no group 32)", "Marlin"}),
        intScheme("W4A16:g64", 4, 64, "int4 symmetric, group 64", true),
        intScheme("W4A16:channel", 4, -1, "int4 symmetric, one scale per output channel", true),
        {"W4A16_ASYM",
         SchemeFamily::IntAsymmetric,
         4,
         128,
         "pack-quantized",
         "int4 asymmetric with a zero point per group of 128",
         {"Machete", "Marlin (uint4 zero points)"},
         false,
         true},
        intScheme("W8A16", 8, 128, "int8 symmetric, group 128 (8.125 bits/weight)", true),
        intScheme("W8A16:channel", 8, -1, "int8 symmetric, one scale per output channel", true),
        intScheme("W8A16:g32", 8, 32, "int8 symmetric, group 32", false),
        intScheme("W8A16:g64", 8, 64, "int8 symmetric, group 64", false),
        {"FP8_DYNAMIC",
         SchemeFamily::Fp8,
         8,
         -1,
         "float-quantized",
         "FP8 e4m3 weights with per-channel scales, dynamic per-token FP8 activations (compute capability >= "
         "8.9)",
         {"CUTLASS FP8 scaled-mm", "CUTLASS FP8 (sm120 kernels, not verified on GB10)"},
         false,
         true},
        {"NVFP4A16",
         SchemeFamily::Nvfp4,
         4,
         16,
         "nvfp4-pack-quantized",
         "FP4 e2m1 weights, FP8 scale per 16, FP32 global scale per fused set (4.5 bits/weight)",
         {"Marlin FP4 (no FP4 MMA on Hopper)", "Marlin FP4"},
         false,
         true},
        {"BF16", SchemeFamily::Keep, 16, -1, "", "kept as it is (listed in ignore)", {"-", "-"}, true, true},
    };
}

std::string upper(std::string_view text)
{
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::toupper(c); });
    return out;
}

/// One codec per scheme, built once (codecs are stateless apart from their parameters).
const std::map<std::string_view, std::unique_ptr<SchemeCodec>>& codecs()
{
    static const auto table = [] {
        std::map<std::string_view, std::unique_ptr<SchemeCodec>> out;
        for (const auto& s : weightSchemes()) {
            switch (s.family) {
            case SchemeFamily::IntSymmetric:
                out[s.name] = makeIntSymmetricCodec(s.intScheme());
                break;
            case SchemeFamily::IntAsymmetric:
                out[s.name] = makeIntAsymmetricCodec(s.groupSize);
                break;
            case SchemeFamily::Fp8:
                out[s.name] = makeFp8Codec();
                break;
            case SchemeFamily::Nvfp4:
                out[s.name] = makeNvfp4Codec();
                break;
            case SchemeFamily::Keep:
                break;
            }
        }
        return out;
    }();
    return table;
}

} // namespace

const std::vector<WeightScheme>& weightSchemes()
{
    static const std::vector<WeightScheme> schemes = makeSchemes();
    return schemes;
}

const WeightScheme* findWeightScheme(std::string_view name)
{
    auto wanted = upper(name);
    if (wanted.ends_with(":G128")) {
        wanted.resize(wanted.size() - 5);
    }
    for (const auto& s : weightSchemes()) {
        if (upper(s.name) == wanted) {
            return &s;
        }
    }
    return nullptr;
}

const WeightScheme& keepScheme()
{
    return weightSchemes().back();
}

const WeightScheme* intSymmetricScheme(int bits, int groupSize)
{
    for (const auto& s : weightSchemes()) {
        if (s.family == SchemeFamily::IntSymmetric && s.bits == bits && s.groupSize == groupSize) {
            return &s;
        }
    }
    return nullptr;
}

std::string weightSchemeNames()
{
    std::string out;
    for (const auto& s : weightSchemes()) {
        if (s.product) {
            out += (out.empty() ? "" : ", ") + std::string(s.name);
        }
    }
    return out;
}

const SchemeCodec* WeightScheme::codec() const
{
    const auto it = codecs().find(name);
    return it == codecs().end() ? nullptr : it->second.get();
}

std::uint64_t WeightScheme::quantizedBytes(std::uint64_t out, std::uint64_t in, DType dtype) const
{
    if (!quantizes()) {
        return out * in * static_cast<std::uint64_t>(dtypeBits(dtype) / 8);
    }
    // CT keeps scales in the weight's dtype when it is a float it supports, else F16 (initialize_qparams).
    const DType scaleDtype = isQuantizableFloat(dtype) ? dtype : DType::F16;
    std::uint64_t bytes = 0;
    for (const auto& t : codec()->tensors(out, in, scaleDtype)) {
        bytes += t.byteSize();
    }
    return bytes;
}

double WeightScheme::bitsPerWeight(std::uint64_t out, std::uint64_t in, DType dtype) const
{
    const auto weights = static_cast<double>(out * in);
    return weights > 0 ? 8.0 * static_cast<double>(quantizedBytes(out, in, dtype)) / weights : 0.0;
}

std::string WeightScheme::shapeProblem(std::uint64_t out, std::uint64_t in, TensorSplit split,
                                       int tpDegree) const
{
    if (!quantizes()) {
        return {};
    }
    // One portable gate for every scheme (schemes-spec §6.1): in % 128 and out % 64 per rank, which
    // also makes every group size divide the row.
    return QuantScheme{4, groupSize > 0 ? groupSize : -1}.shapeProblem(out, in, split, tpDegree);
}

nlohmann::json WeightScheme::weightsConfig() const
{
    if (!quantizes()) {
        return nullptr;
    }
    const bool channel = groupSize < 0;
    const bool isFloat = family == SchemeFamily::Fp8 || family == SchemeFamily::Nvfp4;
    std::string strategy = channel ? "channel" : "group";
    if (family == SchemeFamily::Nvfp4) {
        strategy = "tensor_group";
    }
    return {
        {"actorder", nullptr},
        {"block_structure", nullptr},
        {"dynamic", false},
        {"group_size", channel ? nlohmann::json(nullptr) : nlohmann::json(groupSize)},
        {"num_bits", bits},
        {"observer", "minmax"},
        {"observer_kwargs", nlohmann::json::object()},
        {"strategy", strategy},
        {"symmetric", family != SchemeFamily::IntAsymmetric},
        {"type", isFloat ? "float" : "int"},
    };
}

nlohmann::json WeightScheme::inputActivationsConfig() const
{
    if (family != SchemeFamily::Fp8) {
        return nullptr;
    }
    return {
        {"actorder", nullptr},
        {"block_structure", nullptr},
        {"dynamic", true},
        {"group_size", nullptr},
        {"num_bits", 8},
        {"observer", nullptr},
        {"observer_kwargs", nlohmann::json::object()},
        {"strategy", "token"},
        {"symmetric", true},
        {"type", "float"},
    };
}

} // namespace spark
