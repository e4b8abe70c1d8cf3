#include "core/plan/budgetallocator.h"

#include "core/plan/matchentry.h"
#include "core/plan/vllmmatching.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace spark {
namespace {

/// The shard names vLLM expands a fused unit into ("…gate_up_proj" → "…gate_proj", "…up_proj").
std::vector<std::string> namesOf(const SweepUnit& unit)
{
    std::vector<std::string> names{unit.name};
    const auto& mapping = standardFusedMapping();
    if (const auto it = mapping.find(unit.leaf); it != mapping.end()) {
        const auto prefix = unit.name.substr(0, unit.name.size() - unit.leaf.size());
        for (const auto& shard : it->second) {
            names.push_back(prefix + shard);
        }
    }
    return names;
}

} // namespace

std::string_view budgetKindName(BudgetKind kind)
{
    return kind == BudgetKind::Streamed ? "streamed_bytes" : "checkpoint_bytes";
}

CandidateLosses weightErrorLosses(const SweepResult& sweep, const std::vector<double>& alphas)
{
    if (alphas.size() != sweep.units.size()) {
        throw std::invalid_argument("one alpha per unit is needed");
    }
    CandidateLosses losses;
    for (std::size_t u = 0; u < sweep.units.size(); ++u) {
        auto& row = losses.perUnit.emplace_back();
        for (const auto& c : sweep.units[u].candidates) {
            row.push_back(alphas[u] * c.relErr * c.relErr);
        }
    }
    return losses;
}

BudgetAllocator::BudgetAllocator(SweepResult sweep, std::vector<double> alphas, BudgetKind kind)
    : m_sweep(std::move(sweep)), m_alphas(std::move(alphas)), m_kind(kind)
{
    m_losses = weightErrorLosses(m_sweep, m_alphas);
    build();
}

BudgetAllocator::BudgetAllocator(SweepResult sweep, CandidateLosses losses, BudgetKind kind)
    : m_sweep(std::move(sweep)), m_alphas(m_sweep.units.size(), 1.0), m_losses(std::move(losses)),
      m_kind(kind)
{
    build();
}

void BudgetAllocator::build()
{
    checkLosses();
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t otherFixed =
        m_kind == BudgetKind::Streamed ? m_sweep.bytesFixed : m_sweep.streamedFixed;
    std::vector<Node> current{{fixedCost(), otherFixed, 0.0, 0, 0}};
    std::vector<Node> next;
    for (std::size_t u = 0; u < m_sweep.units.size(); ++u) {
        extendFrontier(current, u, next);
        std::vector<Step> steps;
        steps.reserve(current.size());
        for (const auto& n : current) {
            steps.push_back({n.parent, n.option});
        }
        m_stages.push_back(std::move(steps));
    }
    m_last = current;
    for (const auto& n : m_last) {
        FrontierPoint p;
        p.streamedBytes = m_kind == BudgetKind::Streamed ? n.cost : n.other;
        p.bytes = m_kind == BudgetKind::Streamed ? n.other : n.cost;
        p.loss = n.error;
        m_frontier.push_back(p);
    }
    m_buildSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BudgetAllocator::checkLosses() const
{
    if (!m_sweep.measured) {
        throw std::invalid_argument("the sweep has not been measured");
    }
    if (m_losses.perUnit.size() != m_sweep.units.size()) {
        throw std::invalid_argument("one loss row per unit is needed");
    }
    for (std::size_t u = 0; u < m_sweep.units.size(); ++u) {
        const auto& row = m_losses.perUnit[u];
        if (row.size() != m_sweep.units[u].candidates.size() ||
            !std::all_of(row.begin(), row.end(), [](double v) { return std::isfinite(v); })) {
            throw std::invalid_argument("unit " + m_sweep.units[u].name +
                                        ": one finite loss per candidate is needed");
        }
    }
}

std::vector<std::uint32_t> BudgetAllocator::unitOptions(std::size_t u) const
{
    const auto& unit = m_sweep.units[u];
    // The unit's own Pareto set: by cost, each kept option strictly better in error than the cheaper
    // ones.
    std::vector<std::uint32_t> order(unit.candidates.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    auto errorOf = [&](std::uint32_t i) { return m_losses.perUnit[u][i]; };
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        const auto ca = costOf(unit.candidates[a]);
        const auto cb = costOf(unit.candidates[b]);
        return ca != cb ? ca < cb : errorOf(a) < errorOf(b);
    });
    std::vector<std::uint32_t> options;
    for (const auto i : order) {
        if (options.empty() || errorOf(i) < errorOf(options.back())) {
            options.push_back(i);
        }
    }
    return options;
}

void BudgetAllocator::extendFrontier(std::vector<Node>& current, std::size_t u, std::vector<Node>& next) const
{
    const auto& unit = m_sweep.units[u];
    const auto options = unitOptions(u);
    // Sum of the two Pareto sets, then the dominated points dropped. Each option shifts the (sorted)
    // current frontier by a constant, so the sum is k sorted runs: merge them pairwise instead of
    // sorting.
    const auto before = [](const Node& a, const Node& b) {
        if (a.cost != b.cost) {
            return a.cost < b.cost;
        }
        return a.error != b.error ? a.error < b.error : a.other < b.other;
    };
    next.clear();
    next.reserve(current.size() * options.size());
    std::vector<std::size_t> runs{0};
    for (const auto i : options) {
        const auto& c = unit.candidates[i];
        const std::uint64_t other = m_kind == BudgetKind::Streamed ? c.bytes : c.streamedBytes;
        const auto add = costOf(c);
        const auto err = m_losses.perUnit[u][i];
        for (std::uint32_t p = 0; p < current.size(); ++p) {
            next.push_back({current[p].cost + add, current[p].other + other, current[p].error + err, p, i});
        }
        runs.push_back(next.size());
    }
    while (runs.size() > 2) {
        std::vector<std::size_t> merged{0};
        for (std::size_t r = 0; r + 2 < runs.size(); r += 2) {
            std::inplace_merge(next.begin() + static_cast<std::ptrdiff_t>(runs[r]),
                               next.begin() + static_cast<std::ptrdiff_t>(runs[r + 1]),
                               next.begin() + static_cast<std::ptrdiff_t>(runs[r + 2]), before);
            merged.push_back(runs[r + 2]);
        }
        if (runs.size() % 2 == 0) {
            merged.push_back(runs.back()); // an odd run out waits for the next round
        }
        runs = std::move(merged);
    }
    current.clear();
    for (const auto& n : next) {
        if (current.empty() || n.error < current.back().error) {
            current.push_back(n);
        }
    }
}

std::uint64_t BudgetAllocator::costOf(const SweepCandidate& c) const
{
    return m_kind == BudgetKind::Streamed ? c.streamedBytes : c.bytes;
}

std::uint64_t BudgetAllocator::fixedCost() const
{
    return m_kind == BudgetKind::Streamed ? m_sweep.streamedFixed : m_sweep.bytesFixed;
}

std::optional<std::size_t> BudgetAllocator::bestWithin(std::uint64_t budget) const
{
    const auto& last = m_last;
    const auto it = std::upper_bound(last.begin(), last.end(), budget,
                                     [](std::uint64_t b, const Node& n) { return b < n.cost; });
    if (it == last.begin()) {
        return std::nullopt;
    }
    return static_cast<std::size_t>(it - last.begin()) - 1;
}

std::optional<std::size_t> BudgetAllocator::cheapestWithin(double loss) const
{
    const auto& last = m_last;
    // The loss strictly decreases along the frontier: the first point at or below the target is the cheapest.
    const auto it =
        std::partition_point(last.begin(), last.end(), [&](const Node& n) { return n.error > loss; });
    if (it == last.end()) {
        return std::nullopt;
    }
    return static_cast<std::size_t>(it - last.begin());
}

Allocation BudgetAllocator::atFrontier(std::size_t index, std::uint64_t budget) const
{
    Allocation a;
    a.kind = m_kind;
    a.budgetBytes = budget;
    a.point = m_frontier.at(index);
    const auto& units = m_sweep.units;
    a.units.resize(units.size());
    std::size_t at = index;
    for (std::size_t u = units.size(); u-- > 0;) {
        const auto& node = m_stages[u][at];
        const auto& c = units[u].candidates[node.option];
        a.units[u] = {u, c.scheme, c.rounding, m_alphas[u], c.relErr, m_losses.perUnit[u][node.option]};
        at = node.parent;
    }
    // The loss recomputed in unit order: the same additions as along the stages, so it is bit-identical.
    double check = 0;
    const auto* defaultRounding = findRoundingMethod(m_sweep.plan.rounding);
    for (const auto& choice : a.units) {
        check += choice.loss;
        const auto& unit = units[choice.unit];
        if (!unit.fixed() || choice.scheme != unit.baseScheme) {
            a.rules.push_back(unitEntry(unit) + "=" + std::string(choice.scheme->name));
        }
        // A unit a user rule pins already has its rounding; the others follow the default unless told.
        if (choice.scheme->quantizes() && !unit.fixed() && unit.roundingPinnedBy.empty() &&
            choice.rounding != defaultRounding) {
            a.roundingRules.push_back(unitEntry(unit) + "=" + std::string(choice.rounding->name));
        }
    }
    if (check != a.point.loss) {
        throw std::logic_error("allocation: the loss along the frontier differs from the units' sum");
    }
    return a;
}

std::optional<Allocation> BudgetAllocator::allocate(std::uint64_t budget) const
{
    const auto index = bestWithin(budget);
    if (!index) {
        return std::nullopt;
    }
    return atFrontier(*index, budget);
}

std::optional<FrontierPoint> BudgetAllocator::evaluate(const QuantPlan& plan, std::string* why) const
{
    auto fail = [&](std::string message) -> std::optional<FrontierPoint> {
        if (why) {
            *why = std::move(message);
        }
        return std::nullopt;
    };
    FrontierPoint p;
    p.streamedBytes = plan.sizes.streamedAfter;
    p.bytes = plan.sizes.bytesAfter;
    for (std::size_t u = 0; u < m_sweep.units.size(); ++u) {
        const auto& unit = m_sweep.units[u];
        const auto* lead = plan.findModule(unit.modules.front());
        if (!lead) {
            return fail("the plan has no module " + unit.modules.front());
        }
        const bool quantized = lead->decision == PlanDecision::Quantize;
        const auto* scheme = quantized ? lead->scheme : &keepScheme();
        const auto* c = unit.candidate(scheme, lead->rounding);
        if (!c) {
            SweepCandidate asked;
            asked.scheme = scheme;
            asked.rounding = quantized ? lead->rounding : &rtnRounding();
            return fail(unit.name + " takes " + candidateLabel(asked) +
                        ", which the sweep did not measure for it" +
                        (unit.fixed() ? " (" + unit.fixedReason + ")" : std::string()));
        }
        p.loss += m_losses.perUnit[u][static_cast<std::size_t>(c - unit.candidates.data())];
    }
    return p;
}

PlanOptions BudgetAllocator::planOptions(const Allocation& allocation) const
{
    auto options = m_sweep.plan;
    options.schemes.insert(options.schemes.end(), allocation.rules.begin(), allocation.rules.end());
    options.roundings.insert(options.roundings.end(), allocation.roundingRules.begin(),
                             allocation.roundingRules.end());
    return options;
}

std::vector<double> resolveAlphas(const SweepResult& sweep, const std::vector<std::string>& rules)
{
    std::vector<double> alphas(sweep.units.size(), 1.0);
    for (const auto& rule : rules) {
        const auto equals = rule.rfind('=');
        if (equals == std::string::npos || equals == 0) {
            throw std::invalid_argument("alpha rule '" + rule + "' is not ENTRY=X");
        }
        const auto text = rule.substr(equals + 1);
        std::size_t used = 0;
        double value = 0;
        try {
            value = std::stod(text, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != text.size() || !std::isfinite(value) || value < 0) {
            throw std::invalid_argument("alpha rule '" + rule + "': X must be a finite number >= 0");
        }
        const MatchEntry entry(rule.substr(0, equals));
        if (!entry.isValid()) {
            throw std::invalid_argument("alpha rule '" + rule + "': " + entry.errorMessage());
        }
        for (std::size_t u = 0; u < sweep.units.size(); ++u) {
            const auto names = namesOf(sweep.units[u]);
            if (std::any_of(names.begin(), names.end(),
                            [&](const std::string& n) { return entry.matches(n); })) {
                alphas[u] = value;
            }
        }
    }
    return alphas;
}

const std::vector<std::string>& rolePriorAlphas()
{
    static const std::vector<std::string> rules{
        "re:.*\\.fc$=2",
        "re:.*\\.down_proj$=1.5",
        "re:.*\\.(qkv|q|k|v)_proj$=1.5",
    };
    return rules;
}

std::uint64_t streamedBudgetForMs(const SweepResult& sweep, const TimingInputs& inputs, double ms)
{
    if (!(ms > 0)) {
        throw std::invalid_argument("the drafter-time budget must be positive");
    }
    double bytes = 0;
    if (inputs.drafterMs && *inputs.drafterMs > 0) {
        // Drafter time scales with streamed bytes from the measured time of the checkpoint as it is.
        bytes = ms / *inputs.drafterMs * static_cast<double>(sweep.streamedBefore);
    } else if (inputs.bandwidthGBps && *inputs.bandwidthGBps > 0) {
        bytes = ms * 1e-3 * *inputs.bandwidthGBps * 1e9;
    } else {
        throw std::invalid_argument(
            "a drafter-time budget needs --drafter-ms (measured) or --bandwidth-gbps / --device");
    }
    return bytes >= static_cast<double>(std::numeric_limits<std::uint64_t>::max())
               ? std::numeric_limits<std::uint64_t>::max()
               : static_cast<std::uint64_t>(std::floor(bytes));
}

QuantPlan makeAllocationPlan(const nlohmann::json& config, const std::vector<TensorInfo>& tensors,
                             const BudgetAllocator& allocator, const Allocation& allocation)
{
    auto plan = makePlan(config, tensors, allocator.planOptions(allocation));
    std::string problem;
    for (const auto& choice : allocation.units) {
        const auto& unit = allocator.sweep().units[choice.unit];
        for (const auto& name : unit.modules) {
            const auto* m = plan.findModule(name);
            const bool quantized = m && m->decision == PlanDecision::Quantize;
            SweepCandidate got;
            got.scheme = quantized ? m->scheme : &keepScheme();
            got.rounding = quantized ? m->rounding : &rtnRounding();
            SweepCandidate chosen;
            chosen.scheme = choice.scheme;
            chosen.rounding = choice.rounding;
            if (problem.empty() && (got.scheme != chosen.scheme || got.rounding != chosen.rounding)) {
                problem = name + " got " + candidateLabel(got) + " instead of " + candidateLabel(chosen);
            }
        }
    }
    if (problem.empty() && (plan.sizes.streamedAfter != allocation.point.streamedBytes ||
                            plan.sizes.bytesAfter != allocation.point.bytes)) {
        problem = "the plan streams " + std::to_string(plan.sizes.streamedAfter) + " bytes and holds " +
                  std::to_string(plan.sizes.bytesAfter) + ", the allocation predicted " +
                  std::to_string(allocation.point.streamedBytes) + " and " +
                  std::to_string(allocation.point.bytes);
    }
    if (!problem.empty()) {
        const auto message = "internal: the allocation's plan differs from the allocation: " + problem;
        plan.errors.push_back(message);
        plan.lint.push_back({"allocation-selfcheck", LintSeverity::Error, {}, message, ""});
    }
    return plan;
}

} // namespace spark
