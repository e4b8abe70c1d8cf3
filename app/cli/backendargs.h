#pragma once

#include "args.h"
#include "core/quant/quantbackend.h"
#include "core/quant/weightscheme.h"

#include <memory>
#include <string>
#include <vector>

namespace spark::cli {

/// @brief The options backendFrom() reads: `--backend auto|cpu|cuda` and `--cuda-memory SIZE`.
OptionTable backendOptionTable();

/// @brief The backend named by `--backend` (default auto), with `--cuda-memory` as the CUDA backend's
/// device-memory budget (default 256 MiB). A fallback notice ("no CUDA device: using the CPU backend")
/// goes to stderr; an unusable explicit choice throws with the reason.
std::unique_ptr<QuantBackend> backendFrom(const Args& args);

/// @brief The CUDA backend serves the integer symmetric schemes only (WeightScheme::cuda); the others run
/// on the CPU. With `--backend cuda` a scheme it lacks is a usage error; with auto, a one-line notice.
void checkBackendServes(const Args& args, const QuantBackend& backend,
                        const std::vector<const WeightScheme*>& schemes);

} // namespace spark::cli
