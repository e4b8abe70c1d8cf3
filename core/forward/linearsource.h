#pragma once

#include "core/forward/inputquantization.h"
#include "core/io/checkpoint.h"
#include "core/quant/schemecodec.h"
#include "core/quant/weightscheme.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace spark {

class ModuleDecoder;

/// @brief The rows of a 2-D weight as FP32 values, produced on demand block by block so that a forward never
/// holds a whole large weight in FP32 (a 154880×6144 head is 3.8 GB as floats). The BF16 draft and any
/// quantized draft differ only in which source stands behind a module. decode() is thread-safe.
class LinearSource
{
  public:
    virtual ~LinearSource() = default;
    virtual std::int64_t rows() const = 0;
    virtual std::int64_t cols() const = 0;
    /// @brief Blocks passed to decode() must start at a multiple of this row.
    virtual std::size_t rowAlignment() const { return 1; }
    /// @brief Rows [firstRow, firstRow + rowCount) as floats, row-major, into @p out.
    virtual void decode(std::int64_t firstRow, std::size_t rowCount, float* out) const = 0;
    /// @brief The same rows rounded to BF16 (nearest even), as bit patterns: the weight a BF16 model serves
    /// (compressed-tensors decompresses into the model's dtype).
    virtual void decodeBf16(std::int64_t firstRow, std::size_t rowCount, std::uint16_t* out) const;
    /// @brief Row @p firstRow of a weight stored as BF16 in memory, rows contiguous after it, for the serving
    /// GEMM to read in place; nullptr when the source computes its rows.
    virtual const std::uint16_t* storedBf16(std::int64_t /*firstRow*/) const { return nullptr; }
    /// @brief What the serving kernel does to this module's inputs (FP8_DYNAMIC quantizes them per token).
    virtual InputQuantization inputQuantization() const { return InputQuantization::None; }
    /// @brief What the source is, for messages: "layers.0.mlp.up_proj (W4A16, in memory)".
    virtual std::string describe() const = 0;

    /// @brief One row (any row, whatever the alignment), e.g. an embedding gather.
    void decodeRow(std::int64_t row, float* out) const;
};

/// @brief A BF16/F16/F32 weight as stored in a checkpoint (the BF16 draft, embeddings, shared heads).
std::shared_ptr<const LinearSource> storedLinear(std::shared_ptr<const Checkpoint> checkpoint,
                                                 const CheckpointTensor& tensor);

/// @brief A stored weight quantized in memory with @p scheme exactly as the exporter writes it, and
/// dequantized as compressed-tensors does (a plan applied without writing a checkpoint).
std::shared_ptr<const LinearSource> planQuantizedLinear(std::shared_ptr<const Checkpoint> checkpoint,
                                                        const CheckpointTensor& tensor,
                                                        const WeightScheme& scheme, SchemeContext context);

/// @brief A module of a compressed-tensors checkpoint, dequantized by the audit's bit-exact decoder.
std::shared_ptr<const LinearSource> decodedLinear(std::shared_ptr<const Checkpoint> checkpoint,
                                                  std::shared_ptr<const ModuleDecoder> decoder,
                                                  std::string name);

/// @brief @p source decoded whole on first use and kept in memory as FP32 (rows × cols floats): for weights
/// small enough that decoding them again on every forward call costs more than holding them.
std::shared_ptr<const LinearSource> memoized(std::shared_ptr<const LinearSource> source);

/// @brief Rows [offset, offset + count) of @p source as a source of their own (Laguna's fused qkv_proj
/// split into q, k and v). @p offset must be a multiple of the source's row alignment.
std::shared_ptr<const LinearSource> rowSlice(std::shared_ptr<const LinearSource> source, std::int64_t offset,
                                             std::int64_t count);

} // namespace spark
