#include "core/io/tensorinfo.h"

namespace spark {

std::string TensorInfo::shapeText() const
{
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        text += (i ? ", " : "") + std::to_string(shape[i]);
    }
    return text + "]";
}

std::uint64_t dataBytes(DType dtype, std::uint64_t numel)
{
    return (numel * static_cast<std::uint64_t>(dtypeBits(dtype)) + 7) / 8;
}

} // namespace spark
