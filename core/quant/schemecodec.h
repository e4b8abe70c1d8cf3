#pragma once

#include "core/io/dtype.h"
#include "core/quant/groupranges.h"
#include "core/quant/weightrows.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace spark {

class QuantBackend;

/// @brief One tensor a quantized module writes (`P.<suffix>`) and how its first dimension lines up with
/// the weight's rows, so a writer or verifier can stream it block by block.
struct EncodedTensor
{
    std::string suffix; ///< "weight_packed", "weight_scale", "weight_zero_point", "weight", ...
    DType dtype = DType::I32;
    std::vector<std::uint64_t> shape;
    /// Weight rows per entry of the first dimension: 1 (one entry per row), 8 (zero points packed along the
    /// output dimension), or 0 for a constant tensor written whole (weight_shape, weight_global_scale).
    std::size_t rowsPerEntry = 1;

    std::uint64_t byteSize() const;
    /// Bytes of one first-dimension entry.
    std::uint64_t entryBytes() const;
    /// @brief Byte range [offset, offset + size) of the entries holding weight rows [firstRow, firstRow +
    /// rowCount) (the whole tensor for a constant one). firstRow must be a multiple of rowsPerEntry.
    std::pair<std::uint64_t, std::uint64_t> rowRange(std::uint64_t firstRow, std::uint64_t rowCount) const;
};

/// @brief What a scheme needs beyond the rows themselves: NVFP4's global scale, shared by a fused set, and
/// the searched range of every group when the rounding method is not RTN.
struct SchemeContext
{
    float globalScale = 1.0f;
    /// Null: each group's range is its own min-max (RTN, the codecs' fast path). Otherwise the ranges of
    /// the whole weight, indexed by WeightRows::firstRow + row (roundingsearch.h).
    std::shared_ptr<const GroupRanges> ranges;
    /// The rounding method searches each block's stored scale code (RoundingMethod::scaleCodeSearch);
    /// only codecs whose searchesScaleCodes() is true read it.
    bool scaleCodeSearch = false;
};

/// @brief One quantized element as the error statistics see it: the dequantized value is
/// D = round_to_dtype(f32(value · scale)) (schemes-spec §8 for every family).
struct ElementCode
{
    float value = 0;        ///< the grid value: q (int), q - zp (asymmetric), the FP8 or FP4 value
    float scale = 0;        ///< the effective scale of the element's group (float32)
    std::uint16_t code = 0; ///< the histogram bin of the stored code (0 .. codeCount() - 1)
};

/// @brief The arithmetic of one scheme family, bit-exact with compressed-tensors (schemes-spec §3).
/// Row blocks come from a streaming reader; every method is thread-safe.
class SchemeCodec
{
  public:
    virtual ~SchemeCodec() = default;

    /// @brief The tensors written for a [out, in] weight of @p dtype (name order irrelevant).
    virtual std::vector<EncodedTensor> tensors(std::uint64_t out, std::uint64_t in, DType dtype) const = 0;
    /// @brief Blocks passed to encode() start at a multiple of this row (8 where zero points pack rows).
    virtual std::size_t rowAlignment() const { return 1; }
    /// @brief True when the context depends on the absmax of the whole fused set (NVFP4).
    virtual bool usesGlobalScale() const { return false; }
    /// @brief Stores one scale code per block that SchemeContext::scaleCodeSearch can choose by search.
    virtual bool searchesScaleCodes() const { return false; }
    /// @brief The context for a module (or fused set) whose largest |w| is @p absmax.
    virtual SchemeContext contextForAbsmax(DType /*dtype*/, float /*absmax*/) const { return {}; }

    /// @brief Encodes @p rows into one buffer per tensor of tensors() (same order): the bytes of the
    /// entries covering the rows (EncodedTensor::rowRange); constant tensors' parts are left empty (see
    /// constantBytes()). Integer schemes run on @p backend, the others on the CPU. Throws QuantError
    /// (NonFinite) naming the tensor and index like computeScales().
    virtual void encode(const WeightRows& rows, const SchemeContext& context,
                        std::vector<std::vector<std::byte>>& parts, const QuantBackend& backend,
                        unsigned threads) const = 0;
    /// @brief encode() when only tensor @p index of tensors() is wanted (the exporter writes one tensor at a
    /// time): parts[index] is filled, the others may be too. Codecs that can skip work override it (the
    /// integer symmetric one computes only the scales for weight_scale).
    virtual void encodeTensor(const WeightRows& rows, const SchemeContext& context, std::size_t index,
                              std::vector<std::vector<std::byte>>& parts, const QuantBackend& backend,
                              unsigned threads) const
    {
        (void)index;
        encode(rows, context, parts, backend, threads);
    }
    /// @brief The bytes of a constant tensor (rowsPerEntry 0) of a [@p out, @p in] weight: weight_shape
    /// (I64 [out, in]) here; NVFP4 adds its global scale.
    virtual std::vector<std::byte> constantBytes(const EncodedTensor& tensor, std::uint64_t out,
                                                 std::uint64_t in, const SchemeContext& context) const;
    /// @brief CT's dequantization (schemes-spec §8) of @p rowCount rows from @p parts laid out as encode()
    /// writes them (constant tensors whole), as float values of the weight dtype (±Inf where CT overflows).
    virtual void decode(std::span<const std::span<const std::byte>> parts, DType dtype, std::size_t rowCount,
                        std::size_t cols, float* out) const = 0;
    /// @brief The codes of row @p r of @p rows (for the error statistics); returns how many of the row's
    /// groups had their scale replaced by eps. Weights must be finite.
    virtual std::size_t traceRow(const WeightRows& rows, std::size_t r, const SchemeContext& context,
                                 ElementCode* out) const = 0;
    /// @brief Histogram bins of ElementCode::code.
    virtual int codeCount() const = 0;
    /// @brief The scaled weight w / scale lies in [-gridRange, gridRange].
    virtual double gridRange() const = 0;
    /// @brief Scales per row of @p cols columns.
    virtual std::size_t groupsPerRow(std::size_t cols) const = 0;
};

/// @brief SchemeCodec::encode() of a whole weight (@p rows from row 0) with its constant tensors filled in:
/// one buffer per tensor of tensors(rows.rowCount, rows.cols, rows.dtype). For tests and small weights.
std::vector<std::vector<std::byte>> encodeWeight(const SchemeCodec& codec, const WeightRows& rows,
                                                 const SchemeContext& context, const QuantBackend& backend,
                                                 unsigned threads = 1);

/// @brief max |w| of @p rows, exact; throws QuantError (NonFinite) at the first NaN/Inf.
float weightAbsmax(const WeightRows& rows);

} // namespace spark
