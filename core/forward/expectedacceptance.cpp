#include "core/forward/expectedacceptance.h"

#include <algorithm>
#include <cmath>

namespace spark {

std::vector<std::vector<double>> targetProbabilities(const DraftForward& draft, const Proposals& proposals,
                                                     std::int64_t index,
                                                     const std::vector<std::int64_t>& targets,
                                                     std::span<const double> temperatures)
{
    const auto vocab = proposals.logits.cols;
    std::vector<std::vector<double>> out(temperatures.size(), std::vector<double>(targets.size(), 0.0));
    for (std::size_t j = 0; j < targets.size() && !temperatures.empty(); ++j) {
        const float* row = proposals.logits.row(index * proposals.k + static_cast<std::int64_t>(j));
        const double top = *std::max_element(row, row + vocab);
        std::int64_t entry = -1; // the draft-vocabulary entry of the target's token
        for (std::int64_t v = 0; v < vocab && entry < 0; ++v) {
            entry = draft.targetId(v) == targets[j] ? v : -1;
        }
        if (entry < 0) {
            continue;
        }
        for (std::size_t t = 0; t < temperatures.size(); ++t) {
            double sum = 0;
            for (std::int64_t v = 0; v < vocab; ++v) {
                sum += std::exp((row[v] - top) / temperatures[t]);
            }
            out[t][j] = std::exp((row[entry] - top) / temperatures[t]) / sum;
        }
    }
    return out;
}

double expectedAccepted(std::span<const double> probabilities)
{
    double product = 1, sum = 0;
    for (const double q : probabilities) {
        product *= q;
        sum += product;
    }
    return sum;
}

} // namespace spark
