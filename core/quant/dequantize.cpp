#include "core/quant/dequantize.h"

#include "core/quant/packing.h"
#include "core/quant/rtnscalar.h"
#include "core/quant/weightrows.h"

#include <vector>

namespace spark {

void dequantizeRows(DType dtype, const std::int32_t* packed, const std::byte* scales, std::size_t rowCount,
                    std::size_t cols, const QuantScheme& scheme, std::byte* out)
{
    const std::size_t words = scheme.packedWordsPerRow(cols);
    const std::size_t groups = scheme.groupsPerRow(cols);
    const std::size_t width = scheme.groupWidth(cols);
    const std::size_t eb = scaleBytes(dtype);
    std::vector<std::int8_t> q(cols);
    for (std::size_t r = 0; r < rowCount; ++r) {
        unpackRow(packed + r * words, cols, scheme.bits, q.data());
        for (std::size_t k = 0; k < cols; ++k) {
            const float s = rtn::loadScale(dtype, scales, r * groups + k / width);
            rtn::storeScale(dtype, rtn::dequantizeValue(dtype, q[k], s), out + (r * cols + k) * eb);
        }
    }
}

} // namespace spark
