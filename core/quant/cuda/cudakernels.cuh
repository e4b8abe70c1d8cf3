#pragma once
// Launchers of the CUDA kernels (cudakernels.cu), used by the streaming engine (cudaengine.cu).
// Pointers are device pointers to one chunk of rows; all launches are asynchronous on @p stream.

#include "core/quant/cuda/cudaengine.h"

#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>

namespace spark::cuda::kernels {

/// What a quantization launch reads and writes.
enum Mode : unsigned {
    kWriteScales = 1u, ///< compute scales from the absmax and store them
    kReadScales = 2u,  ///< take the scales from @p scales (quantizeRows)
    kPack = 4u,        ///< quantize and pack
};

/// @brief Scales and/or packed words of @p rows rows (flat index of the first non-finite weight into
/// @p firstBad with atomicMin). @p epsFlags (may be null) gets 1 for groups whose scale rounded to 0.
void launchQuantize(const Block& shape, std::size_t rows, const void* weights, void* scales,
                    std::int32_t* packed, std::uint8_t* epsFlags, unsigned mode, unsigned long long* firstBad,
                    int smCount, cudaStream_t stream);

/// @brief Error statistics of @p rows rows for scales computed by launchQuantize(kWriteScales) with
/// eps flags: one RowPartials per row and histogram counts added to the device arrays.
void launchStats(const Block& shape, const StatsLayout& layout, std::size_t rows, const void* weights,
                 const void* scales, const std::uint8_t* epsFlags, RowPartials* perRow, std::uint32_t* hist,
                 int smCount, cudaStream_t stream);

/// @brief cudaSuccess when the current device can run these kernels (the fat binary holds SASS or PTX
/// it accepts); cudaErrorNoKernelImageForDevice or similar otherwise.
cudaError_t checkKernelImage();

/// @brief Words of the histogram buffer of launchStats(): q, weight, error, absErr back to back.
std::size_t statsHistogramWords(const StatsLayout& layout);

} // namespace spark::cuda::kernels
