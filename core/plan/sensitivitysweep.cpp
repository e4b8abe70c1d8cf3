#include "core/plan/sensitivitysweep.h"

#include "core/io/ioerror.h"
#include "core/plan/nameregex.h"
#include "core/plan/quantplan.h"
#include "core/quant/errorstats.h"
#include "core/quant/modulecontexts.h"
#include "core/quant/quanterror.h"
#include "core/quant/rowchunks.h"
#include "core/quant/schemecodec.h"
#include "core/quant/schemesweep.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

namespace spark {
namespace {

/// The vLLM kernel that serves @p scheme on @p device ("" for any device); empty when there is none.
std::string_view kernelOn(const WeightScheme& scheme, const std::string& device)
{
    const auto kernel = device == "gb10" ? scheme.kernels.sm121 : scheme.kernels.sm90;
    return kernel == "-" ? std::string_view{} : kernel;
}

/// Bytes of @p module's weight under @p scheme (the module's own weight bytes for BF16).
std::uint64_t weightBytesUnder(const PlannedModule& module, const WeightScheme& scheme)
{
    return scheme.quantizes() ? scheme.quantizedBytes(module.outFeatures, module.inFeatures, module.dtype)
                              : module.weightBytes;
}

SweepCandidate costOf(const std::vector<const PlannedModule*>& members, const WeightScheme& scheme,
                      const RoundingMethod& rounding = rtnRounding())
{
    SweepCandidate c;
    c.scheme = &scheme;
    c.rounding = scheme.quantizes() ? &rounding : &rtnRounding();
    for (const auto* m : members) {
        const auto bytes = weightBytesUnder(*m, scheme);
        c.bytes += bytes;
        c.streamedBytes += m->gathered ? 0 : bytes;
    }
    return c;
}

/// Modules an entry of the user's (--ignore, --scheme) names: the allocator leaves them as the user said.
std::set<std::string> userPinnedModules(const QuantPlan& plan)
{
    std::set<std::string> out;
    for (const auto& e : plan.entries) {
        if (e.source == "--ignore" || e.source == "--scheme") {
            for (const auto& m : e.matches) {
                out.insert(m.module);
            }
        }
    }
    return out;
}

[[noreturn]] void rethrowWithFile(const QuantError& e, const std::string& file)
{
    throw QuantError(e.kind(), file + ": " + e.problem(), e.tensor(), e.index());
}

/// One member weight of a unit being measured.
struct Member
{
    const CheckpointTensor* tensor = nullptr;
    std::byte* data = nullptr; ///< the whole weight, inside the arena, when the unit is buffered
};

WeightRows wholeRows(const Member& m)
{
    const auto& info = m.tensor->info;
    return {info.dtype,
            m.data,
            static_cast<std::size_t>(info.shape.at(0)),
            static_cast<std::size_t>(info.shape.at(1)),
            0,
            info.name};
}

/// Feeds @p m to @p add in row blocks: from memory when buffered, else streamed from the checkpoint.
/// @p advance counts the bytes.
template <typename AddRows, typename Advance>
void feedRows(const Checkpoint& checkpoint, const Member& m, AddRows&& add, Advance&& advance)
{
    const auto& info = m.tensor->info;
    const auto rows = static_cast<std::uint64_t>(info.shape.at(0));
    const auto cols = static_cast<std::size_t>(info.shape.at(1));
    if (m.data) {
        const std::size_t rowBytes = cols * (dtypeBits(info.dtype) / 8);
        const std::size_t blockRows =
            std::max<std::size_t>(1, kChunkBytes / std::max<std::size_t>(rowBytes, 1));
        for (std::uint64_t first = 0; first < rows; first += blockRows) {
            const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(blockRows, rows - first));
            add(WeightRows{info.dtype, m.data + first * rowBytes, count, cols, first, info.name});
            advance(count * rowBytes, *m.tensor);
        }
        return;
    }
    RowChunkReader reader(checkpoint, *m.tensor);
    while (const auto block = reader.next()) {
        add(*block);
        advance(block->rowCount * cols * reader.elementBytes(), *m.tensor);
    }
}

/// What one candidate does to a unit: Σ (W - D)² over its members, or how many elements of D overflow.
struct UnitError
{
    double sqNorm = 0;
    double sqErr = 0;
    std::uint64_t nonFinite = 0;
    std::string overflowIn; ///< a member whose D overflows
};

using AdvanceFn = std::function<void(std::uint64_t, const CheckpointTensor&)>;

/// Every rtn scheme of a unit in one SIMD sweep pass over its members.
std::vector<UnitError> measureRtn(const Checkpoint& checkpoint, const std::vector<Member>& members,
                                  const std::vector<const WeightScheme*>& schemes, float setAbsmax,
                                  unsigned threads, const AdvanceFn& advance)
{
    std::vector<UnitError> out(schemes.size());
    for (const auto& m : members) {
        const auto& info = m.tensor->info;
        std::vector<SchemeContext> contexts;
        for (const auto* s : schemes) {
            contexts.push_back(s->codec()->usesGlobalScale()
                                   ? s->codec()->contextForAbsmax(info.dtype, setAbsmax)
                                   : SchemeContext{});
        }
        try {
            SchemeSweepAccumulator acc(schemes, contexts, info.shape.at(0), info.shape.at(1));
            feedRows(
                checkpoint, m, [&](const WeightRows& rows) { acc.addRows(rows, threads); }, advance);
            const auto errors = acc.result();
            for (std::size_t i = 0; i < schemes.size(); ++i) {
                out[i].sqNorm += acc.sqNorm();
                if (errors[i].sqErr) {
                    out[i].sqErr += *errors[i].sqErr;
                } else {
                    out[i].nonFinite += errors[i].dequantNonFinite;
                    out[i].overflowIn = info.name;
                }
            }
        } catch (const QuantError& e) {
            rethrowWithFile(e, checkpoint.fileOf(*m.tensor).path().string());
        }
    }
    return out;
}

/// One candidate with a searching rounding: the ranges the exporter would search (moduleContexts, the
/// unit one fused set for NVFP4's global scale), then the error under them.
UnitError measureSearched(const Checkpoint& checkpoint, const std::string& unit,
                          const std::vector<Member>& members, const SweepCandidate& candidate,
                          unsigned threads, const AdvanceFn& advance)
{
    std::vector<ContextRequest> requests;
    for (const auto& m : members) {
        requests.push_back({m.tensor, candidate.scheme, candidate.rounding, unit});
    }
    std::uint64_t reported = 0;
    const auto contexts =
        moduleContexts(checkpoint, requests, threads, [&](std::uint64_t done, std::uint64_t) {
            advance(done - reported, *members.front().tensor);
            reported = done;
            return true;
        });
    UnitError out;
    for (std::size_t i = 0; i < members.size(); ++i) {
        const auto& m = members[i];
        const auto& info = m.tensor->info;
        if (!contexts[i].error.empty()) {
            throw QuantError(QuantErrorKind::NonFinite, contexts[i].error, info.name);
        }
        try {
            ErrorStatsAccumulator acc(*candidate.scheme, info.shape.at(0), info.shape.at(1),
                                      contexts[i].context);
            feedRows(
                checkpoint, m, [&](const WeightRows& rows) { acc.addRows(rows, threads); }, advance);
            const auto stats = acc.result();
            out.sqNorm += stats.sqNorm;
            if (stats.sqErr) {
                out.sqErr += *stats.sqErr;
            } else {
                out.nonFinite += stats.dequantNonFinite;
                out.overflowIn = info.name;
            }
        } catch (const QuantError& e) {
            rethrowWithFile(e, checkpoint.fileOf(*m.tensor).path().string());
        }
    }
    return out;
}

/// Memory for the buffered units, allocated once at the size of the largest and reused: a fresh buffer per
/// unit would pay the kernel's zero-fill and page faults again for every unit.
class Arena
{
  public:
    std::byte* reserve(std::uint64_t bytes)
    {
        if (bytes > m_size) {
            m_data.reset(new std::byte[bytes]); // default-initialised: pread fills it
            m_size = bytes;
        }
        return m_data.get();
    }

  private:
    std::unique_ptr<std::byte[]> m_data;
    std::uint64_t m_size = 0;
};

/// Candidates: as asked (every product scheme by default), plus what the plan already uses, so that the
/// plan without a budget is a point the allocator can compare with.
std::vector<const WeightScheme*> candidateSchemes(const SweepOptions& options, const QuantPlan& base)
{
    std::vector<const WeightScheme*> out;
    if (options.candidates.empty()) {
        for (const auto& s : weightSchemes()) {
            if (s.product && s.quantizes()) {
                out.push_back(&s);
            }
        }
    } else {
        out = options.candidates;
    }
    for (const auto& m : base.modules) {
        if (m.scheme->quantizes() && std::find(out.begin(), out.end(), m.scheme) == out.end()) {
            out.push_back(m.scheme);
        }
    }
    return out;
}

/// Rounding methods offered to every free unit: rtn, the asked ones and the plan's default, in the
/// registry's order (a unit a rounding rule names keeps its own method and is offered no other).
std::vector<const RoundingMethod*> offeredRoundings(const SweepOptions& options, const QuantPlan& base)
{
    if (base.defaultRounding->needsHessian()) {
        throw std::invalid_argument("the plan's rounding '" + std::string(base.defaultRounding->name) +
                                    "' needs a capture's input Hessians, which a sweep does not compute: "
                                    "sweep under another rounding and quantize with --rounding hessian");
    }
    std::set<const RoundingMethod*> roundings{&rtnRounding(), base.defaultRounding};
    roundings.insert(options.roundings.begin(), options.roundings.end());
    std::vector<const RoundingMethod*> out;
    for (const auto& method : roundingMethods()) {
        if (roundings.count(&method) != 0) {
            out.push_back(&method);
        }
    }
    return out;
}

/// Legality is makePlan's: a plan that gives every unit the candidate quantizes exactly the units that can
/// take it (shape gate, vLLM limits, raw weight reads, dtype), keeping fused sets whole. With rounding
/// rules of the user, a second plan under another default rounding tells the units a rule names: their
/// rounding does not follow the default.
struct TrialPlans
{
    std::vector<QuantPlan> trial;        ///< one per candidate scheme
    std::vector<QuantPlan> otherDefault; ///< the same under another default rounding; empty without rules
};

TrialPlans makeTrialPlans(const nlohmann::json& config, const std::vector<TensorInfo>& tensors,
                          const SweepOptions& options, const SweepResult& sweep, const QuantPlan& base)
{
    TrialPlans plans;
    for (const auto* s : sweep.candidates) {
        auto opts = options.plan;
        opts.schemes.push_back("re:.*=" + std::string(s->name));
        if (options.includeLmHead) {
            opts.schemes.push_back("lm_head=" + std::string(s->name));
        }
        plans.trial.push_back(makePlan(config, tensors, opts));
        if (!options.plan.roundings.empty()) {
            opts.rounding = base.defaultRounding == &rtnRounding() ? "mse" : "rtn";
            plans.otherDefault.push_back(makePlan(config, tensors, opts));
        }
    }
    return plans;
}

/// The plan's modules by decision unit (vLLM layer): its Linears, and lm_head when asked.
using UnitModules = std::map<std::string, std::vector<const PlannedModule*>>;

UnitModules unitModules(const QuantPlan& base, bool includeLmHead)
{
    UnitModules byUnit;
    for (const auto& m : base.modules) {
        if (m.isLinear() || (includeLmHead && m.vllmName == "lm_head" && !m.weightTensor.empty())) {
            byUnit[m.vllmName].push_back(&m);
        }
    }
    return byUnit;
}

/// Offers @p unit BF16 and every candidate scheme its trial plan quantizes it under (with each offered
/// rounding, or the one a rounding rule pins); the others are excluded with the trial plan's reason.
void offerCandidates(SweepUnit& unit, const std::vector<const PlannedModule*>& members,
                     const SweepResult& sweep, const TrialPlans& plans, const std::string& device)
{
    unit.candidates.push_back(costOf(members, keepScheme()));
    std::string keptBecause;
    for (std::size_t i = 0; i < sweep.candidates.size(); ++i) {
        const auto& scheme = *sweep.candidates[i];
        const auto* lead = plans.trial[i].findModule(members.front()->name);
        const bool legal = std::all_of(members.begin(), members.end(), [&](const PlannedModule* m) {
            const auto* t = plans.trial[i].findModule(m->name);
            return t && t->decision == PlanDecision::Quantize && t->scheme == &scheme;
        });
        if (!legal) {
            const auto why = lead ? lead->reason : std::string("not in the plan");
            unit.excluded.push_back(std::string(scheme.name) + ": " + why);
            keptBecause = keptBecause.empty() ? why : keptBecause;
        } else if (kernelOn(scheme, device).empty()) {
            unit.excluded.push_back(std::string(scheme.name) + ": no vLLM kernel on " + device);
        } else {
            const auto* rounding = lead->rounding;
            if (!plans.otherDefault.empty() && unit.roundingPinnedBy.empty() &&
                plans.otherDefault[i].findModule(lead->name)->rounding == rounding) {
                unit.roundingPinnedBy = "a --rounding rule gives it " + std::string(rounding->name);
            }
            if (!unit.roundingPinnedBy.empty()) {
                unit.candidates.push_back(
                    costOf(members, scheme, rounding->appliesTo(scheme) ? *rounding : rtnRounding()));
                continue;
            }
            // A method the scheme cannot use (codes off NVFP4) is not offered; rtn stands in when none can.
            const auto before = unit.candidates.size();
            for (const auto* method : sweep.roundings) {
                if (method->appliesTo(scheme)) {
                    unit.candidates.push_back(costOf(members, scheme, *method));
                }
            }
            if (unit.candidates.size() == before) {
                unit.candidates.push_back(costOf(members, scheme, rtnRounding()));
            }
        }
    }
    if (unit.candidates.size() == 1) {
        unit.fixedReason =
            "must stay BF16: " + (keptBecause.empty() ? std::string("no candidate") : keptBecause);
    }
}

/// The sweep unit of vLLM layer @p name: fixed at the plan's choice when an entry of the user's names it,
/// else offered every legal candidate.
SweepUnit sweepUnit(const std::string& name, const std::vector<const PlannedModule*>& members,
                    const std::set<std::string>& pinned, const SweepResult& sweep, const TrialPlans& plans,
                    const std::string& device)
{
    SweepUnit unit;
    unit.name = name;
    unit.leaf = name.substr(name.rfind('.') + 1);
    for (const auto* m : members) {
        unit.modules.push_back(m->name);
        unit.weights.push_back(m->weightTensor);
    }
    unit.baseScheme = members.front()->scheme;
    unit.baseRounding =
        members.front()->decision == PlanDecision::Quantize ? members.front()->rounding : &rtnRounding();
    const bool userNamed = std::any_of(members.begin(), members.end(),
                                       [&](const PlannedModule* m) { return pinned.count(m->name) != 0; });
    if (userNamed) {
        unit.fixedReason = "named by a --scheme or --ignore entry: " + members.front()->reason;
        unit.candidates.push_back(costOf(members, *unit.baseScheme, *unit.baseRounding));
    } else {
        offerCandidates(unit, members, sweep, plans, device);
    }
    return unit;
}

/// The rtn candidates' schemes: one SIMD sweep pass measures them all.
std::vector<const WeightScheme*> rtnSchemes(const SweepUnit& u)
{
    std::vector<const WeightScheme*> out;
    for (const auto& c : u.candidates) {
        if (c.scheme->quantizes() && c.rounding->isRtn()) {
            out.push_back(c.scheme);
        }
    }
    return out;
}

std::uint64_t searchedCount(const SweepUnit& u)
{
    return static_cast<std::uint64_t>(
        std::count_if(u.candidates.begin(), u.candidates.end(),
                      [](const SweepCandidate& c) { return c.scheme->quantizes() && !c.rounding->isRtn(); }));
}

bool needsAbsmax(const std::vector<const WeightScheme*>& schemes)
{
    return std::any_of(schemes.begin(), schemes.end(),
                       [](const WeightScheme* s) { return s->codec()->usesGlobalScale(); });
}

/// Bytes of @p u's weights; throws when the checkpoint lacks one.
std::uint64_t unitBytes(const Checkpoint& checkpoint, const SweepUnit& u)
{
    std::uint64_t bytes = 0;
    for (const auto& w : u.weights) {
        const auto* t = checkpoint.find(w);
        if (!t) {
            throw std::invalid_argument(checkpoint.folder().string() + ": weight '" + w +
                                        "' of the plan is not in the checkpoint");
        }
        bytes += t->info.byteSize();
    }
    return bytes;
}

/// Total bytes to read, for the progress callback (units read twice count twice; a searched candidate
/// reads its unit once to search and once to measure).
std::uint64_t bytesToRead(const Checkpoint& checkpoint, const SweepResult& sweep,
                          std::uint64_t unitBufferBytes)
{
    std::uint64_t total = 0;
    for (const auto& u : sweep.units) {
        const auto schemes = rtnSchemes(u);
        const auto bytes = unitBytes(checkpoint, u);
        if (!schemes.empty()) {
            total += needsAbsmax(schemes) && bytes > unitBufferBytes ? 2 * bytes : bytes;
        }
        total += 2 * searchedCount(u) * bytes;
    }
    return total;
}

/// What comes before measuring: when @p buffered, every member read into @p buffer; when @p absmaxFirst
/// (a scheme with a global scale), the absmax of the whole set, which it returns.
float readMembers(const Checkpoint& checkpoint, std::vector<Member>& members, bool buffered,
                  std::byte* buffer, bool absmaxFirst, const AdvanceFn& advance)
{
    float setAbsmax = 0;
    for (auto& m : members) {
        const auto& info = m.tensor->info;
        const auto& file = checkpoint.fileOf(*m.tensor);
        try {
            if (buffered) {
                // Read once: the weight stays in memory until every candidate has run on it.
                m.data = buffer;
                buffer += info.byteSize();
                file.read(info, 0, std::span(m.data, info.byteSize()));
                if (absmaxFirst) {
                    setAbsmax = std::max(setAbsmax, weightAbsmax(wholeRows(m)));
                }
            } else if (absmaxFirst) {
                RowChunkReader reader(checkpoint, *m.tensor);
                setAbsmax = std::max(setAbsmax, reader.absmax());
                advance(info.byteSize(), *m.tensor);
            }
        } catch (const QuantError& e) {
            rethrowWithFile(e, file.path().string());
        }
    }
    return setAbsmax;
}

/// The error of every quantizing candidate of @p unit: the rtn ones from one sweep pass, each searched one
/// on its own.
std::map<const SweepCandidate*, UnitError>
measureCandidates(const Checkpoint& checkpoint, const SweepUnit& unit, const std::vector<Member>& members,
                  const std::vector<const WeightScheme*>& schemes, float setAbsmax, unsigned threads,
                  const AdvanceFn& advance)
{
    std::map<const SweepCandidate*, UnitError> errors;
    if (!schemes.empty()) {
        const auto rtn = measureRtn(checkpoint, members, schemes, setAbsmax, threads, advance);
        for (const auto& c : unit.candidates) {
            const auto it = std::find(schemes.begin(), schemes.end(), c.scheme);
            if (it != schemes.end() && c.rounding->isRtn()) {
                errors[&c] = rtn[static_cast<std::size_t>(it - schemes.begin())];
            }
        }
    }
    for (const auto& c : unit.candidates) {
        if (c.scheme->quantizes() && !c.rounding->isRtn()) {
            errors[&c] = measureSearched(checkpoint, unit.name, members, c, threads, advance);
        }
    }
    return errors;
}

/// rel_err of the unit: the members' squared errors and norms add up (a fused set is one matrix).
void scoreCandidates(SweepUnit& unit, const std::map<const SweepCandidate*, UnitError>& errors)
{
    std::vector<SweepCandidate> kept;
    for (auto& c : unit.candidates) {
        const auto it = errors.find(&c);
        if (it == errors.end()) {
            kept.push_back(c);
            continue;
        }
        const auto& e = it->second;
        if (e.nonFinite > 0) {
            // D overflows the dtype (an int4 -8·s past the dtype's max): unusable unless the user pinned
            // it.
            if (!unit.fixed()) {
                unit.excluded.push_back(candidateLabel(c) + ": " + std::to_string(e.nonFinite) +
                                        " dequantized values overflow the dtype in " + e.overflowIn);
                continue;
            }
            c.sqErr = std::numeric_limits<double>::infinity();
        } else {
            c.sqErr = e.sqErr;
        }
        c.relErr = unit.sqNorm > 0 ? std::sqrt(c.sqErr / unit.sqNorm) : 0.0;
        kept.push_back(c);
    }
    unit.candidates = std::move(kept);
    if (unit.candidates.size() == 1 && !unit.fixed()) {
        unit.fixedReason = "must stay BF16: every candidate overflows the dtype";
    }
}

/// Measures the quantizing candidates of @p unit and drops the unusable ones; returns the bytes it measured
/// (none when no candidate quantizes).
std::uint64_t measureUnit(const Checkpoint& checkpoint, SweepUnit& unit, std::uint64_t unitBufferBytes,
                          unsigned threads, Arena& arena, const AdvanceFn& advance)
{
    const auto schemes = rtnSchemes(unit);
    if (schemes.empty() && searchedCount(unit) == 0) {
        return 0;
    }
    std::vector<Member> members;
    for (const auto& w : unit.weights) {
        members.push_back({checkpoint.find(w), nullptr});
    }
    const auto bytes = unitBytes(checkpoint, unit);
    // Searched candidates read the unit again: keep it in memory when it fits.
    const bool absmaxFirst = needsAbsmax(schemes);
    const bool buffered = (absmaxFirst || searchedCount(unit) > 0) && bytes <= unitBufferBytes;
    const float setAbsmax = readMembers(checkpoint, members, buffered,
                                        buffered ? arena.reserve(bytes) : nullptr, absmaxFirst, advance);
    const auto errors = measureCandidates(checkpoint, unit, members, schemes, setAbsmax, threads, advance);
    if (!errors.empty()) {
        unit.sqNorm = errors.begin()->second.sqNorm; // every pass sums the same weights
    }
    scoreCandidates(unit, errors);
    return bytes;
}

} // namespace

const SweepCandidate* SweepUnit::candidate(const WeightScheme* scheme, const RoundingMethod* rounding) const
{
    const auto it = std::find_if(candidates.begin(), candidates.end(), [&](const SweepCandidate& c) {
        return c.scheme == scheme && (!scheme->quantizes() || c.rounding == rounding);
    });
    return it == candidates.end() ? nullptr : &*it;
}

std::string unitEntry(const SweepUnit& unit)
{
    return unit.name == "lm_head" ? unit.name : nameregex::exactEntry(unit.name);
}

std::string candidateLabel(const SweepCandidate& candidate)
{
    const bool rtn = candidate.rounding->isRtn();
    return std::string(candidate.scheme->name) + (rtn ? "" : "+" + std::string(candidate.rounding->name));
}

std::string sweepDeviceNames()
{
    return "gb10, h200";
}

std::vector<const WeightScheme*> parseCandidates(const std::string& list)
{
    std::vector<const WeightScheme*> out;
    std::size_t start = 0;
    while (start <= list.size()) {
        const auto comma = std::min(list.find(',', start), list.size());
        const auto name = list.substr(start, comma - start);
        const auto* scheme = findWeightScheme(name);
        if (!scheme) {
            throw std::invalid_argument("unknown scheme '" + name +
                                        "' in the candidates (known: " + weightSchemeNames() + ")");
        }
        if (scheme->quantizes() && std::find(out.begin(), out.end(), scheme) == out.end()) {
            out.push_back(scheme);
        }
        start = comma + 1;
    }
    return out;
}

std::vector<const RoundingMethod*> parseRoundingCandidates(const std::string& list)
{
    std::vector<const RoundingMethod*> out;
    std::size_t start = 0;
    while (start <= list.size()) {
        const auto comma = std::min(list.find(',', start), list.size());
        const auto name = list.substr(start, comma - start);
        const auto* method = findRoundingMethod(name);
        if (!method) {
            throw std::invalid_argument("unknown rounding method '" + name +
                                        "' in the rounding candidates (known: " + roundingMethodNames() +
                                        ")");
        }
        if (method->needsHessian()) {
            throw std::invalid_argument(
                "rounding '" + name +
                "' cannot be a candidate: its scales need a capture's input Hessians, "
                "which only quantize computes");
        }
        if (std::find(out.begin(), out.end(), method) == out.end()) {
            out.push_back(method);
        }
        start = comma + 1;
    }
    return out;
}

SweepResult prepareSweep(const nlohmann::json& config, const std::vector<TensorInfo>& tensors,
                         const SweepOptions& options)
{
    if (!options.device.empty() && options.device != "gb10" && options.device != "h200") {
        throw std::invalid_argument("unknown device '" + options.device + "' (known: " + sweepDeviceNames() +
                                    ")");
    }
    SweepResult sweep;
    sweep.plan = options.plan;
    sweep.device = options.device;
    const auto base = makePlan(config, tensors, options.plan);
    if (!base.errors.empty()) {
        throw std::invalid_argument("the plan has errors: " + base.errors.front());
    }
    sweep.streamedBefore = base.sizes.streamedBefore;
    sweep.candidates = candidateSchemes(options, base);
    sweep.roundings = offeredRoundings(options, base);
    const auto plans = makeTrialPlans(config, tensors, options, sweep, base);

    const auto byUnit = unitModules(base, options.includeLmHead);
    const auto pinned = userPinnedModules(base);
    for (const auto& [name, members] : byUnit) {
        sweep.units.push_back(sweepUnit(name, members, pinned, sweep, plans, options.device));
    }
    std::uint64_t unitsStreamed = 0;
    std::uint64_t unitsBytes = 0;
    for (const auto& [name, members] : byUnit) {
        const auto baseCost = costOf(members, *members.front()->scheme);
        unitsStreamed += baseCost.streamedBytes;
        unitsBytes += baseCost.bytes;
    }
    sweep.streamedFixed = base.sizes.streamedAfter - unitsStreamed;
    sweep.bytesFixed = base.sizes.bytesAfter - unitsBytes;
    return sweep;
}

void measureSweep(const Checkpoint& checkpoint, SweepResult& sweep, const SweepOptions& options,
                  const ProgressFn& progress)
{
    const auto start = std::chrono::steady_clock::now();
    const unsigned threads = resolveThreads(static_cast<int>(options.threads));
    const auto total = bytesToRead(checkpoint, sweep, options.unitBufferBytes);
    Arena arena;
    std::uint64_t done = 0;
    const AdvanceFn advance = [&](std::uint64_t bytes, const CheckpointTensor& t) {
        done += bytes;
        if (!reportProgress(progress, done, total)) {
            throw IoError(IoErrorKind::Cancelled, checkpoint.fileOf(t).path().string(), "cancelled",
                          t.info.name);
        }
    };
    for (auto& unit : sweep.units) {
        sweep.bytesMeasured +=
            measureUnit(checkpoint, unit, options.unitBufferBytes, threads, arena, advance);
    }
    sweep.measured = true;
    sweep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    reportProgress(progress, total, total);
}

SweepResult sweepCheckpoint(const Checkpoint& checkpoint, const SweepOptions& options,
                            const ProgressFn& progress)
{
    auto sweep = prepareSweep(checkpoint.config(), checkpoint.tensorInfos(), options);
    measureSweep(checkpoint, sweep, options, progress);
    return sweep;
}

} // namespace spark
