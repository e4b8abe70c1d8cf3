#pragma once

#include <cstdint>

/// @brief The inner loop of the forward's attention (blocks.h attend()), one copy per Highway target.
namespace spark::kernels {

/// @brief Rows of one KV head: row i's key at keys + i·stride, its value at values + i·stride.
struct HeadKeys
{
    const float* keys = nullptr;
    const float* values = nullptr;
    std::int64_t stride = 0;
    std::int64_t count = 0;
};

/// @brief One query head over the keys of @p a then @p b: out[d] = Σ_i p_i · v_i[d] with p = softmax(scale ·
/// q · k_i), the maximum subtracted, FP32 throughout. @p scratch holds at least a.count + b.count + 64
/// floats.
void attendHead(const float* q, const HeadKeys& a, const HeadKeys& b, std::int64_t headDim, float scale,
                float* scratch, float* out);

} // namespace spark::kernels
