#pragma once

#include "core/allocate/anchorsplit.h"
#include "core/forward/acceptancejob.h"
#include "core/forward/capturehealth.h"
#include "core/plan/budgetallocator.h"
#include "core/plan/sensitivitysweep.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief What the allocator minimises over the candidates' measured effects.
enum class AcceptanceLoss {
    /// The loss of expected acceptance against the target's tokens (draft-forward.md §13), at the upper
    /// end of its interval.
    ExpectedAcceptance,
    /// Σ over positions of the mean KL(p_BF16 ‖ p_plan) per proposal: blind to the target (kept to compare).
    Kl,
};
/// @brief "expected-acceptance" or "kl"; parseAcceptanceLoss() throws std::invalid_argument on others.
const char* acceptanceLossName(AcceptanceLoss loss);
AcceptanceLoss parseAcceptanceLoss(const std::string& name);

/// @brief What an acceptance-driven plan is measured on.
struct AcceptanceObjectiveInputs
{
    std::filesystem::path draft;       ///< the BF16 draft the sweep was made of
    std::filesystem::path capture;     ///< a capture file, its folder, or a folder of per-sequence files
    CaptureReadOptions captureOptions; ///< layer ids and prompt length the capture does not record
    std::filesystem::path target;      ///< empty: the draft ships everything it reads
    int k = 3;                         ///< proposals per verify cycle
    AnchorSplitCounts anchors;
    AcceptanceLoss loss = AcceptanceLoss::ExpectedAcceptance;
    unsigned threads = 0;
    std::int64_t batchAnchors = 64;
};

/// @brief What one plan does to acceptance against the BF16 draft, on one set of anchors. Both drafts are
/// fed the captured tokens (the target's, on a greedy capture), so every position of every anchor counts.
struct AcceptanceEffect
{
    /// Σ over the k positions of the mean KL(p_BF16 ‖ p_plan) per proposal (over anchors whose earlier
    /// proposals agree).
    double kl = 0;
    /// The change of the accepted length expected of the draft sampled at kObjectiveTemperature (plan −
    /// BF16, paired, 95 % normal interval).
    double objective = 0, objectiveLow = 0, objectiveHigh = 0;
    double tauDelta = 0, tauDeltaLow = 0, tauDeltaHigh = 0; ///< paired mean(L_plan − L_BF16), 95 %
    double flipFirst = 0;                                   ///< share of position-0 proposals that change
    std::int64_t anchors = 0;                               ///< 0: not measured
};

/// @brief Every candidate of every unit measured with that unit alone quantized (the rest BF16).
struct UnitEffects
{
    /// [unit][candidate], parallel to the sweep's candidates. BF16 needs no measurement (its effect is
    /// exactly zero); a candidate the screen dropped keeps its screen measurement.
    std::vector<std::vector<AcceptanceEffect>> perUnit;
    /// [unit][candidate]: on the unit's cost/KL Pareto set after the screen (BF16 and the recipe's own
    /// candidate always are), so measured again on the confirm anchors.
    std::vector<std::vector<bool>> survived;
    std::int64_t screenAnchors = 0, confirmAnchors = 0;
    std::int64_t measuredOnScreen = 0, measuredOnConfirm = 0; ///< candidate runs
    double seconds = 0;
    AcceptanceLoss loss = AcceptanceLoss::ExpectedAcceptance;

    /// The allocator's loss of @p e: KL, or the upper end of the 95 % interval of the objective's loss
    /// (minus the low end of its change). A candidate is charged what it may plausibly cost: a "gain" that
    /// is noise costs something, and of many candidates measured on few anchors the best by luck does not
    /// buy bytes.
    double lossOf(const AcceptanceEffect& e) const;
};

/// @brief The candidates of @p unit that go on from the screen: its Pareto set of (cost, @p losses), by
/// streamed bytes or by checkpoint bytes, plus BF16 and the candidate of the plan without a budget (so
/// that the recipe stays a point the allocator can evaluate).
std::vector<bool> screenSurvivors(const SweepUnit& unit, const std::vector<double>& losses);

/// @brief The sweep restricted to the survivors and their confirmed KL, ready for BudgetAllocator.
struct AcceptanceAllocatorInput
{
    SweepResult sweep;
    CandidateLosses losses;
};

/// @brief @p effects' survivors of @p sweep with their confirmed losses (UnitEffects::lossOf).
AcceptanceAllocatorInput acceptanceAllocatorInput(const SweepResult& sweep, const UnitEffects& effects);

/// @brief A plan measured as a whole: on the confirm anchors (to set against the sum of its units'
/// effects) and on the held-out report anchors (what is reported).
struct PlanAcceptance
{
    AcceptanceEffect confirm;
    AcceptanceEffect report;
    AcceptanceSummary reportSummary; ///< per-position statistics on the report anchors
    std::vector<int> reportAccepted; ///< L of the plan per report anchor, in the split's order
    std::uint64_t streamedBytes = 0, bytes = 0;
};

/// @brief mean(L_a − L_b) over the report anchors with its 95 % interval: two plans compared paired.
struct PairedDifference
{
    double mean = 0, low = 0, high = 0;
    std::int64_t anchors = 0;
};
PairedDifference pairedDifference(const PlanAcceptance& a, const PlanAcceptance& b);

/// @brief The acceptance objective of the budget allocator: opens the draft, its target and a capture
/// once, splits the capture's anchors, measures every unit's candidates (a screen on few anchors, the
/// survivors confirmed on more) and measures whole plans. Every input problem is an IoError or
/// ForwardInputError naming the file and field, raised by the constructor before any heavy work.
class AcceptanceObjective
{
  public:
    explicit AcceptanceObjective(AcceptanceObjectiveInputs inputs);
    ~AcceptanceObjective();
    AcceptanceObjective(AcceptanceObjective&&) noexcept;

    const AcceptanceObjectiveInputs& inputs() const { return m_inputs; }
    const AnchorSplit& anchors() const { return m_split; }
    const CaptureInfo& captureInfo() const;
    /// @brief What the capture check warned of (its errors are thrown by the constructor).
    const std::vector<CaptureFinding>& captureWarnings() const { return m_captureWarnings; }

    /// @brief Measures the candidates of every unit of @p sweep (a sweep of this draft). @p progress counts
    /// candidate runs; returning false cancels (IoError Cancelled).
    UnitEffects measureUnits(const SweepResult& sweep, const ProgressFn& progress = {}) const;
    /// @brief Measures @p plan (of this draft) on the confirm and the report anchors. @p progress counts
    /// anchors.
    PlanAcceptance measurePlan(const QuantPlan& plan, const ProgressFn& progress = {}) const;
    /// @brief Measures @p plan on the confirm anchors only (choosing among plans stays on the selection
    /// samples); @p summary receives the per-position statistics.
    AcceptanceEffect measureSelection(const QuantPlan& plan, AcceptanceSummary* summary,
                                      const ProgressFn& progress = {}) const;
    /// @brief The kernel-numerics floor on the report anchors: the BF16 draft with BF16 activations
    /// (ForwardNumerics::Bf16Activations) against itself in FP32, measured as a plan is.
    AcceptanceEffect measureNumericsFloor(const ProgressFn& progress = {}) const;

  private:
    struct State;
    AcceptanceEffect measure(const QuantPlan& plan, const std::vector<std::string>* modules,
                             const std::vector<Anchor>& anchors, const ProgressFn& progress,
                             std::vector<int>* accepted = nullptr,
                             AcceptanceSummary* summary = nullptr) const;
    /// The BF16 draft against @p other on @p anchors.
    AcceptanceEffect effectOf(const DraftForward& other, const std::vector<Anchor>& anchors,
                              const ProgressFn& progress, std::vector<int>* accepted,
                              AcceptanceSummary* summary) const;

    AcceptanceObjectiveInputs m_inputs;
    AnchorSplit m_split;
    std::vector<CaptureFinding> m_captureWarnings;
    std::unique_ptr<State> m_state;
};

} // namespace spark
