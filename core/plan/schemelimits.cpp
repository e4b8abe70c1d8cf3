#include "core/quant/quantscheme.h"

namespace spark {
namespace {

// vLLM constants (format-spec §4.6): GPTQ_MARLIN_MIN_THREAD_N / _K.
constexpr std::uint64_t kMinThreadN = 64;
constexpr std::uint64_t kMinThreadK = 128;

std::string dims(std::uint64_t out, std::uint64_t in)
{
    return "[" + std::to_string(out) + ", " + std::to_string(in) + "]";
}

} // namespace

std::string QuantScheme::problem() const
{
    if (bits != 4 && bits != 8) {
        return std::to_string(bits) + "-bit weights: vLLM's WNA16 kernels take 4 or 8 bits";
    }
    if (groupSize != -1 && groupSize != 32 && groupSize != 64 && groupSize != 128) {
        return "group size " + std::to_string(groupSize) +
               ": Marlin supports -1 (channel), 32, 64 and 128 (MARLIN_SUPPORTED_GROUP_SIZES)";
    }
    return {};
}

std::string QuantScheme::name() const
{
    return "W" + std::to_string(bits) + "A16 " +
           (groupSize < 0 ? std::string("channel") : "g" + std::to_string(groupSize));
}

std::string QuantScheme::shapeProblem(std::uint64_t out, std::uint64_t in, TensorSplit split,
                                      int tpDegree) const
{
    const auto tp = static_cast<std::uint64_t>(tpDegree < 1 ? 1 : tpDegree);
    std::uint64_t outPart = out;
    std::uint64_t inPart = in;
    if (tp > 1 && split == TensorSplit::Output) {
        if (out % tp != 0) {
            return "out " + std::to_string(out) + " does not split over tp " + std::to_string(tp);
        }
        outPart = out / tp;
    }
    if (tp > 1 && split == TensorSplit::Input) {
        if (in % tp != 0) {
            return "in " + std::to_string(in) + " does not split over tp " + std::to_string(tp);
        }
        inPart = in / tp;
    }
    const std::string where = outPart == out && inPart == in
                                  ? dims(out, in)
                                  : dims(out, in) + " (per rank " + dims(outPart, inPart) + ")";
    if (inPart % kMinThreadK != 0) {
        return "in " + std::to_string(inPart) + " % 128 != 0 " + where + ": Marlin needs in % 128 == 0";
    }
    if (outPart % kMinThreadN != 0) {
        return "out " + std::to_string(outPart) + " % 64 != 0 " + where + ": Marlin needs out % 64 == 0";
    }
    if (groupSize > 0 && inPart % static_cast<std::uint64_t>(groupSize) != 0) {
        return "in " + std::to_string(inPart) + " % group " + std::to_string(groupSize) + " != 0 " + where;
    }
    return {};
}

std::uint64_t QuantScheme::quantizedBytes(std::uint64_t out, std::uint64_t in, DType weightDtype) const
{
    const auto b = static_cast<std::uint64_t>(bits);
    const std::uint64_t packed = out * ((in * b + 31) / 32) * 4;
    // CT keeps the weight's dtype for scales when it is a float it supports, else fp16 (initialize_qparams).
    const DType scaleDtype = isQuantizableFloat(weightDtype) ? weightDtype : DType::F16;
    const std::uint64_t scales =
        out * groupsPerRow(in) * static_cast<std::uint64_t>(dtypeBits(scaleDtype) / 8);
    return packed + scales + 2 * 8;
}

} // namespace spark
