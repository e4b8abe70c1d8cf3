#include "core/quant/fp8e4m3.h"

#include "core/io/floatconv.h"

#include <array>

namespace spark::minifloat {

float e4m3ToFloat(std::uint8_t code)
{
    static const auto table = [] {
        std::array<float, 256> values{};
        for (int c = 0; c < 256; ++c) {
            values[static_cast<std::size_t>(c)] = f8e4m3ToFloat(static_cast<std::uint8_t>(c));
        }
        return values;
    }();
    return table[code];
}

} // namespace spark::minifloat
