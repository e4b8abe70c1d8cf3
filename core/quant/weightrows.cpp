#include "core/quant/weightrows.h"

#include "core/quant/quanterror.h"

#include <string>

namespace spark {

void WeightRows::validate(const QuantScheme& scheme) const
{
    scheme.validate();
    if (!isQuantizableFloat(dtype)) {
        throw QuantError(QuantErrorKind::UnsupportedDType,
                         "cannot quantize dtype " + std::string(dtypeName(dtype)) +
                             " (BF16, F16 or F32 needed)",
                         std::string(tensor));
    }
    if (!scheme.dividesColumns(cols)) {
        throw QuantError(QuantErrorKind::BadShape,
                         "tensor column shape must be divisible by the group size " +
                             std::to_string(scheme.groupSize) + " but got " + std::to_string(cols),
                         std::string(tensor));
    }
}

void WeightRows::throwNonFinite(std::size_t blockIndex) const
{
    const std::uint64_t flat = firstRow * cols + blockIndex;
    const std::uint64_t r = flat / cols;
    const std::uint64_t c = flat % cols;
    throw QuantError(QuantErrorKind::NonFinite,
                     "NaN or Inf at flat index " + std::to_string(flat) + " (row " + std::to_string(r) +
                         ", column " + std::to_string(c) + ")",
                     std::string(tensor), flat);
}

} // namespace spark
