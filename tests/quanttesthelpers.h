#pragma once
// Small helpers shared by the tst_quant*.cpp tests (header-only; each test is its own executable).

#include "core/io/floatconv.h"
#include "core/quant/weightrows.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace spark::test {

/// Bytes of @p values encoded in @p dtype (values must be representable; RNE otherwise).
inline std::vector<std::byte> encode(DType dtype, const std::vector<float>& values)
{
    const std::size_t eb = dtype == DType::F32 ? 4 : 2;
    std::vector<std::byte> out(values.size() * eb);
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (dtype == DType::F32) {
            std::memcpy(out.data() + 4 * i, &values[i], 4);
        } else {
            const std::uint16_t b = dtype == DType::F16 ? floatToF16(values[i]) : floatToBf16(values[i]);
            std::memcpy(out.data() + 2 * i, &b, 2);
        }
    }
    return out;
}

inline std::vector<std::byte> fromBits16(const std::vector<std::uint16_t>& bits)
{
    std::vector<std::byte> out(bits.size() * 2);
    std::memcpy(out.data(), bits.data(), out.size());
    return out;
}

inline std::vector<std::uint16_t> bits16(const std::vector<std::byte>& bytes)
{
    std::vector<std::uint16_t> out(bytes.size() / 2);
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}

inline WeightRows rowsOf(DType dtype, const std::vector<std::byte>& data, std::size_t rows, std::size_t cols)
{
    WeightRows w;
    w.dtype = dtype;
    w.data = data.data();
    w.rowCount = rows;
    w.cols = cols;
    w.tensor = "test.weight";
    return w;
}

inline std::vector<std::int32_t> words(std::initializer_list<std::uint32_t> list)
{
    std::vector<std::int32_t> out;
    for (auto w : list) {
        out.push_back(static_cast<std::int32_t>(w));
    }
    return out;
}

} // namespace spark::test
