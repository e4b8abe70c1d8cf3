#pragma once

#include "core/quant/schemecodec.h"
#include "core/quant/statskernels.h"

namespace spark::kernels {

/// @brief The error statistics of @p rows under @p codec computed from its per-element codes (scalar, rows
/// split over @p threads): the same RowErrorPartials and histogram layout as the SIMD integer kernel, with
/// the codes as q bins, w / scale over ±gridRange() as weight bins and (w - D) / scale as error bins,
/// counted on the elements sampled at @p histogramStride (histogramSampled()). Throws QuantError
/// (NonFinite) at the first NaN/Inf weight.
void traceErrorStats(const SchemeCodec& codec, const WeightRows& rows, const SchemeContext& context,
                     unsigned histogramStride, RowErrorPartials* perRow, StatsHistograms& histograms,
                     unsigned threads);

} // namespace spark::kernels
