#pragma once

#include "core/forward/activations.h"
#include "core/forward/draftspec.h"
#include "core/forward/linearsource.h"

#include <cstdint>
#include <vector>

namespace spark {

/// The shared building blocks of every draft graph (draft-forward.md §1), FP32 throughout.

/// @brief y = x · Wᵀ for the weight behind @p weight, streamed in tiles of rows converted to FP32 one at a
/// time (per thread), so memory holds the activations and a few tiles, never the whole weight in FP32.
Activations linear(const LinearSource& weight, const Activations& x, unsigned threads);

/// @brief The serving numerics' y = x · Wᵀ (draft-forward.md §9): @p x rounded to BF16 (its values already
/// are under those numerics), the weight's rows rounded to BF16 (LinearSource::decodeBf16), BF16 products
/// summed in FP32 by gemm::multiplyTransposedBf16. A module whose inputs the serving kernel quantizes to FP8
/// runs linear() instead: that kernel multiplies FP8 by FP8, not BF16.
Activations linearBf16(const LinearSource& weight, const Activations& x, unsigned threads);

/// @brief RMSNorm over each row (or, with @p groupSize, over each consecutive group of that many features:
/// the per-head q_norm/k_norm): w ⊙ x / sqrt(mean(x²) + eps), in place.
void rmsNorm(Activations& x, const std::vector<float>& weight, double eps, std::int64_t groupSize = 0);

/// @brief Rotates each head of width @p headDim of row r by position @p positions[r] (neox or GPT-J
/// pairs over the first rope.rotaryDims features), in place. cos/sin in FP32 as vLLM computes them.
void applyRope(Activations& x, const std::vector<std::int64_t>& positions, std::int64_t headDim,
               const RopeSpec& rope);

/// @brief x ← silu(gate) ⊙ up, with gate and up side by side.
Activations siluAndMul(const Activations& gate, const Activations& up);

/// @brief x ← x ⊙ softplus(g), one gate per head of @p headDim features (or one per feature when g has
/// as many columns as x): Laguna's attention output gate.
void softplusGate(Activations& x, const Activations& g, std::int64_t headDim);

/// @brief x += y.
void addInPlace(Activations& x, const Activations& y);

/// @brief The keys and values one query row may see: rows of a key/value matrix, by index, with their
/// positions already applied.
struct AttentionKeys
{
    const Activations* keys = nullptr;   ///< [*, kvHeads·headDim], RoPE applied
    const Activations* values = nullptr; ///< [*, kvHeads·headDim]
    std::int64_t first = 0;              ///< rows [first, end) are visible
    std::int64_t end = 0;
};

/// @brief What one query row sees: its sequence's context and its own block (or chain) so far.
struct RowKeys
{
    AttentionKeys context;
    AttentionKeys own;
};

/// @brief Scaled dot-product attention of every row of @p queries over the keys @p keys names for it (one
/// entry per row), GQA (q head h reads KV head h / (heads / kvHeads)), softmax in FP32 with the max
/// subtracted, scale headDim^-0.5, into @p out [rows, heads·headDim]; parallel over heads.
void attend(const Activations& queries, const std::vector<RowKeys>& keys, std::int64_t heads,
            std::int64_t kvHeads, std::int64_t headDim, Activations& out, unsigned threads);

} // namespace spark
