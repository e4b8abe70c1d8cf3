#pragma once

#include "core/io/dtype.h"
#include "core/quant/roundingkernels.h"

#include <cstdint>
#include <vector>

namespace spark {

/// @brief |d|^n rounded to a 16-bit dtype, for every non-negative value d of it: the DTypeLp error term of
/// the `mse` rounding. PyTorch computes the pow of a bf16/f16 tensor in float with the exponent cast to the
/// dtype (2.40625 for bf16, 2.400390625 for f16, rounding.md §1.6); indexing by the bits makes it a lookup.
class PowTable
{
  public:
    PowTable(DType dtype, double norm);

    /// @brief The term of the magnitude with these 15 bits of the dtype.
    float term(std::uint32_t magnitudeBits) const { return m_byBits[magnitudeBits & 0x7FFFu]; }
    /// @brief The tables as the SIMD kernel reads them (valid while this table lives).
    kernels::PowLookup lookup() const;

  private:
    void buildFactors(double n);

    std::vector<float> m_byBits;         // by the 15 magnitude bits
    std::vector<float> m_mantissaPowers; // bf16 only: kernels::PowLookup's factor tables
    std::vector<float> m_fractionPowers;
    int m_numerator = 0;
    int m_minExponent = 0;
    int m_maxExponent = -1;
};

/// @brief The table of @p dtype (BF16 or F16) for LC's exponent 2.4, the only one registered (@p norm).
const PowTable& powTable(DType dtype, double norm);

} // namespace spark
