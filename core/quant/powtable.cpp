#include "core/quant/powtable.h"

#include "core/quant/rtnscalar.h"

#include <bit>
#include <cmath>

namespace spark {

PowTable::PowTable(DType dtype, double norm)
{
    m_byBits.resize(1u << 15);
    const double n = rtn::roundToDType(dtype, static_cast<float>(norm));
    for (std::uint32_t bits = 0; bits < m_byBits.size(); ++bits) {
        const float a = rtn::rawToFloat(dtype, bits);
        m_byBits[bits] =
            std::isfinite(a)
                ? rtn::roundToDType(dtype, static_cast<float>(std::pow(static_cast<double>(a), n)))
                : a;
    }
    if (dtype == DType::BF16) {
        buildFactors(n);
    }
}

/// A bf16 magnitude (1 + m/128)·2^(e-127) has the power (1 + m/128)^n·2^(f/32)·2^k where 32k + f = N(e - 127)
/// and N = 32n: two float factor tables of 128 and 32 entries fit in ten AVX-512 registers, so the kernel
/// looks them up with permutes instead of gathering from the 128 KiB table by bits, and the power of two is
/// an exponent addition. The product of the two rounded factors is within 2^-22.4 of the power, closer than
/// any bf16 magnitude's power to a bf16 rounding midpoint (2^-20.5); the tables are used only for the
/// exponents e where the product stays a normal float, and only when they give the full table's value for
/// every mantissa of them (checked here, so no libm's pow can make them differ).
void PowTable::buildFactors(double n)
{
    const double numerator = n * 32.0;
    if (numerator != std::floor(numerator) || numerator <= 0.0 || numerator > 256.0) {
        return;
    }
    const int big = static_cast<int>(numerator);
    std::vector<float> mantissaPowers(128), fractionPowers(32);
    for (std::size_t m = 0; m < mantissaPowers.size(); ++m) {
        mantissaPowers[m] = static_cast<float>(std::pow(1.0 + static_cast<double>(m) / 128.0, n));
    }
    for (std::size_t f = 0; f < fractionPowers.size(); ++f) {
        fractionPowers[f] = static_cast<float>(std::exp2(static_cast<double>(f) / 32.0));
    }
    // The products' float exponents are 0 .. headroom.
    const int headroom = std::ilogb(mantissaPowers.back() * fractionPowers.back());
    auto powerOfTwo = [&](int e) { return (big * (e - 127)) >> 5; };
    int lo = 1;
    while (lo < 255 && powerOfTwo(lo) < -126) {
        ++lo;
    }
    int hi = 254;
    while (hi >= lo && powerOfTwo(hi) + headroom > 127) {
        --hi;
    }
    for (int e = lo; e <= hi; ++e) {
        const int x = big * (e - 127);
        for (std::uint32_t m = 0; m < 128; ++m) {
            const float c = mantissaPowers[m] * fractionPowers[static_cast<std::size_t>(x & 31)];
            const float p = std::bit_cast<float>(std::bit_cast<std::int32_t>(c) + (x >> 5) * (1 << 23));
            if (rtn::roundToDType(DType::BF16, p) != m_byBits[static_cast<std::uint32_t>(e) << 7 | m]) {
                return;
            }
        }
    }
    m_mantissaPowers = std::move(mantissaPowers);
    m_fractionPowers = std::move(fractionPowers);
    m_numerator = big;
    m_minExponent = lo;
    m_maxExponent = hi;
}

kernels::PowLookup PowTable::lookup() const
{
    if (m_mantissaPowers.empty()) {
        return {m_byBits.data()};
    }
    return {m_byBits.data(), m_mantissaPowers.data(), m_fractionPowers.data(),
            m_numerator,     m_minExponent,           m_maxExponent};
}

const PowTable& powTable(DType dtype, double norm)
{
    static const PowTable bf16(DType::BF16, norm);
    static const PowTable f16(DType::F16, norm);
    return dtype == DType::F16 ? f16 : bf16;
}

} // namespace spark
