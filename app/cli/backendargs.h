#pragma once

#include "args.h"
#include "core/quant/quantbackend.h"

#include <memory>

namespace spark::cli {

/// @brief The backend named by `--backend auto|cpu|cuda` (default auto). A fallback notice ("no CUDA
/// device: using the CPU backend") goes to stderr; an unusable explicit choice throws with the reason.
std::unique_ptr<QuantBackend> backendFrom(const Args& args);

} // namespace spark::cli
