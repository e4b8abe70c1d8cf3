#include "core/forward/inputquantization.h"

#include "core/quant/fp8e4m3.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace spark {

InputQuantization inputQuantizationOf(const WeightScheme& scheme)
{
    const auto config = scheme.inputActivationsConfig();
    if (config.is_null()) {
        return InputQuantization::None;
    }
    if (config.value("type", "") == "float" && config.value("num_bits", 0) == 8 &&
        config.value("strategy", "") == "token" && config.value("dynamic", false)) {
        return InputQuantization::Fp8PerToken;
    }
    throw std::invalid_argument(std::string(scheme.name) + ": input_activations " + config.dump() +
                                " cannot be reproduced by the forward");
}

void quantizeInputs(InputQuantization mode, Activations& x)
{
    if (mode == InputQuantization::None) {
        return;
    }
    constexpr float kMax = 448.0f;
    constexpr float kMinScale = 1.0f / (kMax * 512.0f);
    for (std::int64_t r = 0; r < x.rows; ++r) {
        float* row = x.row(r);
        float absmax = 0;
        for (std::int64_t c = 0; c < x.cols; ++c) {
            absmax = std::max(absmax, std::fabs(row[c]));
        }
        const float scale = std::max(absmax / kMax, kMinScale);
        for (std::int64_t c = 0; c < x.cols; ++c) {
            const float q = std::clamp(row[c] / scale, -kMax, kMax);
            row[c] = minifloat::e4m3ToFloat(minifloat::e4m3FromFloat(q)) * scale;
        }
    }
}

} // namespace spark
