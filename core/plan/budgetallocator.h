#pragma once

#include "core/plan/quantplan.h"
#include "core/plan/sensitivitysweep.h"
#include "core/plan/timingprediction.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief Which bytes a budget limits.
enum class BudgetKind {
    Streamed,   ///< bytes one draft step streams (drafter time scales with these)
    Checkpoint, ///< bytes of the checkpoint on disk
};

/// @brief "streamed_bytes", "checkpoint_bytes".
std::string_view budgetKindName(BudgetKind kind);

/// @brief A plan's cost and loss: the sum over units of what each unit's choice costs in the allocator's
/// measure (the weighted error α·rel_err², or the measured KL of the acceptance objective).
struct FrontierPoint
{
    std::uint64_t streamedBytes = 0; ///< the whole plan, per draft step
    std::uint64_t bytes = 0;         ///< the whole checkpoint
    double loss = 0;
};

/// @brief What a candidate of each unit adds to a plan's loss: [unit][candidate], parallel to
/// SweepResult::units[u].candidates. Any finite values; smaller is better.
struct CandidateLosses
{
    std::vector<std::vector<double>> perUnit;
};

/// @brief α_u · rel_err² per candidate: the weight-error objective.
CandidateLosses weightErrorLosses(const SweepResult& sweep, const std::vector<double>& alphas);

/// @brief The scheme and rounding one unit gets.
struct UnitChoice
{
    std::size_t unit = 0; ///< index into SweepResult::units
    const WeightScheme* scheme = &keepScheme();
    const RoundingMethod* rounding = &rtnRounding();
    double alpha = 1;
    double relErr = 0;
    double loss = 0; ///< what the choice adds to the plan's loss
};

/// @brief One allocation: a scheme per unit, its cost and error, and the rules that make it a plan.
struct Allocation
{
    BudgetKind kind = BudgetKind::Streamed;
    std::uint64_t budgetBytes = 0;
    FrontierPoint point;
    std::vector<UnitChoice> units; ///< every unit of the sweep, in its order
    /// "ENTRY=SCHEME" rules, one per unit the allocator decides (an anchored regex on its vLLM name), to
    /// append to the sweep's PlanOptions::schemes.
    std::vector<std::string> rules;
    /// "ENTRY=METHOD" rules for the quantized units whose chosen rounding is not the plan's default, to
    /// append to the sweep's PlanOptions::roundings.
    std::vector<std::string> roundingRules;
};

/// @brief The exact multiple-choice knapsack over a sweep's units: minimise the loss subject to a byte
/// budget. The whole Pareto frontier (cost vs E) is built once by adding the units' Pareto sets one after the
/// other and dropping dominated points, so every budget is then answered by a binary search and a walk back
/// through the stages. Exact for any budget: no scaling of bytes, no greedy step.
class BudgetAllocator
{
  public:
    /// @brief The weight-error objective. @p alphas: one weight per unit of @p sweep (resolveAlphas());
    /// @p sweep must be measured.
    BudgetAllocator(SweepResult sweep, std::vector<double> alphas, BudgetKind kind = BudgetKind::Streamed);
    /// @brief Any objective: @p losses gives every candidate's loss (the acceptance objective's measured KL).
    BudgetAllocator(SweepResult sweep, CandidateLosses losses, BudgetKind kind = BudgetKind::Streamed);

    const SweepResult& sweep() const { return m_sweep; }
    const std::vector<double>& alphas() const { return m_alphas; }
    BudgetKind kind() const { return m_kind; }
    const CandidateLosses& losses() const { return m_losses; }
    /// @brief The Pareto frontier, cheapest first; the loss strictly decreases along it.
    const std::vector<FrontierPoint>& frontier() const { return m_frontier; }
    /// @brief Seconds it took to build the frontier.
    double buildSeconds() const { return m_buildSeconds; }

    /// @brief The frontier point with the least loss whose cost is at most @p budget; nullopt when even the
    /// cheapest plan costs more.
    std::optional<std::size_t> bestWithin(std::uint64_t budget) const;
    /// @brief The cheapest frontier point with a loss <= @p loss; nullopt when none reaches it.
    std::optional<std::size_t> cheapestWithin(double loss) const;
    /// @brief The allocation of frontier point @p index.
    Allocation atFrontier(std::size_t index, std::uint64_t budget = 0) const;
    /// @brief bestWithin() then atFrontier().
    std::optional<Allocation> allocate(std::uint64_t budget) const;

    /// @brief Cost and loss of any plan of the same draft and options (a preset's, the plan without a
    /// budget); nullopt with @p why when a unit's scheme in it was not measured or a fixed unit differs.
    std::optional<FrontierPoint> evaluate(const QuantPlan& plan, std::string* why = nullptr) const;
    /// @brief The sweep's plan options with the allocation's scheme and rounding rules appended.
    PlanOptions planOptions(const Allocation& allocation) const;

  private:
    /// The frontier, stage by stage, from m_losses.
    void build();
    /// Throws unless the sweep is measured and m_losses holds one finite loss per candidate.
    void checkLosses() const;
    /// The candidates of unit @p u on its own Pareto set, cheapest first.
    std::vector<std::uint32_t> unitOptions(std::size_t u) const;
    std::uint64_t costOf(const SweepCandidate& c) const;
    std::uint64_t fixedCost() const;

    /// One frontier point of one stage: its parent in the previous stage and the option that led to it.
    struct Node
    {
        std::uint64_t cost;
        std::uint64_t other;
        double error;
        std::uint32_t parent;
        std::uint32_t option;
    };

    /// Extends @p current, the frontier over the units before @p u, to unit @p u; @p next is scratch space
    /// kept between units.
    void extendFrontier(std::vector<Node>& current, std::size_t u, std::vector<Node>& next) const;

    /// How a point of stage u was reached: its point in stage u - 1 and the option of unit u.
    struct Step
    {
        std::uint32_t parent;
        std::uint32_t option;
    };

    SweepResult m_sweep;
    std::vector<double> m_alphas; ///< 1 per unit under an objective other than weight error
    CandidateLosses m_losses;
    BudgetKind m_kind;
    std::vector<std::vector<Step>> m_stages; ///< stage u: the frontier over units [0, u], back pointers only
    std::vector<Node> m_last;                ///< the last stage in full
    std::vector<FrontierPoint> m_frontier;
    double m_buildSeconds = 0;
};

/// @brief α per unit from rules "ENTRY=X" (vLLM target semantics on the unit's vLLM and shard names; later
/// rules win; 1 for units no rule names). Throws std::invalid_argument naming a malformed rule.
std::vector<double> resolveAlphas(const SweepResult& sweep, const std::vector<std::string>& rules);

/// @brief Documented role priors as α rules (a one-click preset; heuristics, not measurements): fc 2 (it
/// feeds every draft layer from the target's hidden states), down_proj 1.5 (its inputs carry the MLP's
/// largest activation outliers, so weight error is amplified most there), q/k/v 1.5 (errors pass through
/// the softmax), o_proj and gate/up 1.
const std::vector<std::string>& rolePriorAlphas();

/// @brief The streamed-bytes budget that keeps the predicted drafter time at most @p ms (the plan's model:
/// time scales with streamed bytes, from a measured drafter time or a bandwidth). Throws
/// std::invalid_argument when @p inputs give no basis.
std::uint64_t streamedBudgetForMs(const SweepResult& sweep, const TimingInputs& inputs, double ms);

/// @brief makePlan() with the allocation's rules, checked: every module must get the scheme and rounding the
/// allocation chose and the sizes must equal its point; otherwise the plan carries an "allocation-selfcheck"
/// error.
QuantPlan makeAllocationPlan(const nlohmann::json& config, const std::vector<TensorInfo>& tensors,
                             const BudgetAllocator& allocator, const Allocation& allocation);

} // namespace spark
