#pragma once

#include "core/forward/activations.h"
#include "core/quant/weightscheme.h"

namespace spark {

/// @brief What the serving kernel does to a Linear's inputs before the matrix product.
enum class InputQuantization {
    None,        ///< weight-only schemes: the activations stay BF16
    Fp8PerToken, ///< dynamic per-token float8_e4m3fn (FP8_DYNAMIC's `input_activations`)
};

/// @brief The input quantization @p scheme's `input_activations` ask vLLM for. Throws
/// std::invalid_argument for an `input_activations` the forward cannot reproduce.
InputQuantization inputQuantizationOf(const WeightScheme& scheme);

/// @brief @p x as the kernel sees it: per row, scale = max(absmax / 448, 1 / (448 · 512)), every value
/// x / scale clamped to ±448, rounded to float8_e4m3fn and multiplied back by the scale. This is vLLM's
/// per-token dynamic FP8 quantization (QuantFP8 with a per-token group shape, whose minimum scale keeps an
/// all-zero row finite); the product then runs on these values.
void quantizeInputs(InputQuantization mode, Activations& x);

} // namespace spark
