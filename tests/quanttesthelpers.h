#pragma once
// Small helpers shared by the tests that quantize weights (header-only; each test is its own executable).

#include "core/io/checkpoint.h"
#include "core/io/floatconv.h"
#include "core/quant/weightrows.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
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

/// The rows of the 2-D tensor @p name of @p checkpoint (a view into its mapping). Throws when it is missing,
/// so that a changed fixture fails loudly instead of quantizing nothing.
inline WeightRows rowsOf(const Checkpoint& checkpoint, const std::string& name)
{
    const auto* t = checkpoint.find(name);
    if (!t) {
        throw std::runtime_error("checkpoint lacks " + name);
    }
    return {t->info.dtype,
            checkpoint.bytes(*t).data(),
            static_cast<std::size_t>(t->info.shape[0]),
            static_cast<std::size_t>(t->info.shape[1]),
            0,
            t->info.name};
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
