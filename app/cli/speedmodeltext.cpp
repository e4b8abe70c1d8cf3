#include "speedmodeltext.h"

#include "core/bench/speedmodelformat.h"
#include "format.h"

#include <algorithm>

namespace spark::cli {
namespace {

std::string list(const std::vector<double>& values)
{
    std::string out;
    for (const double v : values) {
        out += (out.empty() ? "" : " ") + formatSignificant(v);
    }
    return out;
}

std::string prompt(long long len)
{
    return len > 0 ? std::to_string(len) : "-";
}

} // namespace

void printSpeedModel(std::ostream& out, const SpeedModel& model)
{
    out << "\nspeed model: drafter " << formatSignificant(model.drafterMs) << " ms per cycle, "
        << drafterKindName(model.kind) << " (" << model.kindBasis << ")\n";
    Table cells({"arm", "prompt", "k", "a_i", "tau(k)", "T ms", "t_D ms", "t_D %", "V0 ms", "v ms",
                 "D(j) tok/s j=0..k", "k*"});
    for (const auto& c : model.cells) {
        cells.add({c.arm, prompt(c.promptLen), std::to_string(c.k), list(c.acceptance),
                   formatSignificant(c.tokensPerVerify.back()), formatSignificant(c.cycleMs),
                   formatSignificant(c.drafterMs), formatSignificant(100.0 * c.drafterShare(), 3),
                   formatSignificant(c.verifyMs), formatSignificant(c.verifyMsPerToken),
                   list(c.predictedTokS), std::to_string(c.bestK)});
    }
    cells.print(out);
    if (std::any_of(model.cells.begin(), model.cells.end(),
                    [](const SpeedModelCell& c) { return c.quantized.has_value(); })) {
        out << "\nquantized draft (saving " << formatSignificant(*model.savingMs)
            << " ms: " << model.savingBasis << "):\n";
        Table quantized({"prompt", "D tok/s", "T' ms", "D' tok/s", "change", "D'(j) j=0..k", "k'*",
                         "measured arm", "measured", "change", "residual", "D' (measured tau')", "change",
                         "residual"});
        for (const auto& c : model.cells) {
            if (!c.quantized) {
                continue;
            }
            const auto& q = *c.quantized;
            std::vector<std::string> row{prompt(c.promptLen),
                                         formatSignificant(c.measuredTokS),
                                         formatSignificant(q.cycleMs),
                                         formatSignificant(q.predictedTokS),
                                         formatChangePercent(q.predictedChange),
                                         list(q.predictedTokSByK),
                                         std::to_string(q.bestK)};
            if (q.measured) {
                const auto& m = *q.measured;
                row.insert(row.end(),
                           {m.arm, formatSignificant(m.measuredTokS), formatChangePercent(m.measuredChange),
                            formatChangePercent(m.residual), formatSignificant(m.predictedTokS),
                            formatChangePercent(m.predictedChange),
                            formatChangePercent(m.residualMeasuredAcceptance)});
            } else {
                row.insert(row.end(), {"-", "-", "-", "-", "-", "-", "-"});
            }
            quantized.add(std::move(row));
        }
        quantized.print(out);
    }
    out << "\nassumptions:\n";
    for (const auto& a : model.assumptions) {
        out << "  - " << a << "\n";
    }
}

} // namespace spark::cli
