#include "core/plan/sensitivitysweep.h"

#include "core/io/ioerror.h"
#include "core/plan/quantplan.h"
#include "core/quant/quanterror.h"
#include "core/quant/rowchunks.h"
#include "core/quant/schemecodec.h"
#include "core/quant/schemesweep.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
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

SweepCandidate costOf(const std::vector<const PlannedModule*>& members, const WeightScheme& scheme)
{
    SweepCandidate c;
    c.scheme = &scheme;
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

} // namespace

const SweepCandidate* SweepUnit::candidate(const WeightScheme* scheme) const
{
    const auto it = std::find_if(candidates.begin(), candidates.end(),
                                 [&](const SweepCandidate& c) { return c.scheme == scheme; });
    return it == candidates.end() ? nullptr : &*it;
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

    // Candidates: as asked (every product scheme by default), plus what the plan already uses, so that the
    // plan without a budget is a point the allocator can compare with.
    if (options.candidates.empty()) {
        for (const auto& s : weightSchemes()) {
            if (s.product && s.quantizes()) {
                sweep.candidates.push_back(&s);
            }
        }
    } else {
        sweep.candidates = options.candidates;
    }
    for (const auto& m : base.modules) {
        if (m.scheme->quantizes() &&
            std::find(sweep.candidates.begin(), sweep.candidates.end(), m.scheme) == sweep.candidates.end()) {
            sweep.candidates.push_back(m.scheme);
        }
    }
    // Legality is makePlan's: a plan that gives every unit the candidate quantizes exactly the units that can
    // take it (shape gate, vLLM limits, raw weight reads, dtype), keeping fused sets whole.
    std::vector<QuantPlan> trial;
    for (const auto* s : sweep.candidates) {
        auto opts = options.plan;
        opts.schemes.push_back("re:.*=" + std::string(s->name));
        trial.push_back(makePlan(config, tensors, opts));
    }

    std::map<std::string, std::vector<const PlannedModule*>> byUnit;
    for (const auto& m : base.modules) {
        if (m.isLinear()) {
            byUnit[m.vllmName].push_back(&m);
        }
    }
    const auto pinned = userPinnedModules(base);
    std::uint64_t unitsStreamed = 0;
    std::uint64_t unitsBytes = 0;
    for (const auto& [name, members] : byUnit) {
        SweepUnit unit;
        unit.name = name;
        unit.leaf = name.substr(name.rfind('.') + 1);
        for (const auto* m : members) {
            unit.modules.push_back(m->name);
            unit.weights.push_back(m->weightTensor);
        }
        unit.baseScheme = members.front()->scheme;
        const bool userNamed = std::any_of(members.begin(), members.end(), [&](const PlannedModule* m) {
            return pinned.count(m->name) != 0;
        });
        if (userNamed) {
            unit.fixedReason = "named by a --scheme or --ignore entry: " + members.front()->reason;
            unit.candidates.push_back(costOf(members, *unit.baseScheme));
            sweep.units.push_back(std::move(unit));
            continue;
        }
        unit.candidates.push_back(costOf(members, keepScheme()));
        std::string keptBecause;
        for (std::size_t i = 0; i < sweep.candidates.size(); ++i) {
            const auto& scheme = *sweep.candidates[i];
            const auto* lead = trial[i].findModule(members.front()->name);
            const bool legal = std::all_of(members.begin(), members.end(), [&](const PlannedModule* m) {
                const auto* t = trial[i].findModule(m->name);
                return t && t->decision == PlanDecision::Quantize && t->scheme == &scheme;
            });
            if (!legal) {
                const auto why = lead ? lead->reason : std::string("not in the plan");
                unit.excluded.push_back(std::string(scheme.name) + ": " + why);
                keptBecause = keptBecause.empty() ? why : keptBecause;
            } else if (kernelOn(scheme, options.device).empty()) {
                unit.excluded.push_back(std::string(scheme.name) + ": no vLLM kernel on " + options.device);
            } else {
                unit.candidates.push_back(costOf(members, scheme));
            }
        }
        if (unit.candidates.size() == 1) {
            unit.fixedReason =
                "must stay BF16: " + (keptBecause.empty() ? std::string("no candidate") : keptBecause);
        }
        sweep.units.push_back(std::move(unit));
    }
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
    auto quantizing = [](const SweepUnit& u) {
        std::vector<const WeightScheme*> out;
        for (const auto& c : u.candidates) {
            if (c.scheme->quantizes()) {
                out.push_back(c.scheme);
            }
        }
        return out;
    };
    auto needsAbsmax = [](const std::vector<const WeightScheme*>& schemes) {
        return std::any_of(schemes.begin(), schemes.end(),
                           [](const WeightScheme* s) { return s->codec()->usesGlobalScale(); });
    };

    // Total bytes to read, for the progress callback (units read twice count twice).
    std::uint64_t total = 0;
    for (const auto& u : sweep.units) {
        const auto schemes = quantizing(u);
        if (schemes.empty()) {
            continue;
        }
        std::uint64_t bytes = 0;
        for (const auto& w : u.weights) {
            const auto* t = checkpoint.find(w);
            if (!t) {
                throw std::invalid_argument(checkpoint.folder().string() + ": weight '" + w +
                                            "' of the plan is not in the checkpoint");
            }
            bytes += t->info.byteSize();
        }
        total += needsAbsmax(schemes) && bytes > options.unitBufferBytes ? 2 * bytes : bytes;
    }

    Arena arena;
    std::uint64_t done = 0;
    auto advance = [&](std::uint64_t bytes, const CheckpointTensor& t) {
        done += bytes;
        if (!reportProgress(progress, done, total)) {
            throw IoError(IoErrorKind::Cancelled, checkpoint.fileOf(t).path().string(), "cancelled",
                          t.info.name);
        }
    };

    for (auto& unit : sweep.units) {
        const auto schemes = quantizing(unit);
        if (schemes.empty()) {
            continue;
        }
        std::vector<Member> members;
        std::uint64_t unitBytes = 0;
        for (const auto& w : unit.weights) {
            members.push_back({checkpoint.find(w), nullptr});
            unitBytes += members.back().tensor->info.byteSize();
        }
        const bool absmaxFirst = needsAbsmax(schemes);
        const bool buffered = absmaxFirst && unitBytes <= options.unitBufferBytes;
        std::byte* next = buffered ? arena.reserve(unitBytes) : nullptr;
        float setAbsmax = 0;
        for (auto& m : members) {
            const auto& info = m.tensor->info;
            const auto& file = checkpoint.fileOf(*m.tensor);
            try {
                if (buffered) {
                    // Read once: the weight stays in memory until every candidate has run on it.
                    m.data = next;
                    next += info.byteSize();
                    file.read(info, 0, std::span(m.data, info.byteSize()));
                    const WeightRows whole{info.dtype,
                                           m.data,
                                           static_cast<std::size_t>(info.shape.at(0)),
                                           static_cast<std::size_t>(info.shape.at(1)),
                                           0,
                                           info.name};
                    setAbsmax = std::max(setAbsmax, weightAbsmax(whole));
                } else if (absmaxFirst) {
                    RowChunkReader reader(checkpoint, *m.tensor);
                    setAbsmax = std::max(setAbsmax, reader.absmax());
                    advance(info.byteSize(), *m.tensor);
                }
            } catch (const QuantError& e) {
                rethrowWithFile(e, file.path().string());
            }
        }
        std::vector<double> sqErr(schemes.size(), 0.0);
        std::vector<std::uint64_t> nonFinite(schemes.size(), 0);
        std::vector<std::string> overflowIn(schemes.size());
        for (auto& m : members) {
            const auto& info = m.tensor->info;
            const auto& file = checkpoint.fileOf(*m.tensor);
            std::vector<SchemeContext> contexts;
            for (const auto* s : schemes) {
                contexts.push_back(s->codec()->usesGlobalScale()
                                       ? s->codec()->contextForAbsmax(info.dtype, setAbsmax)
                                       : SchemeContext{});
            }
            const auto rows = info.shape.at(0);
            const auto cols = static_cast<std::size_t>(info.shape.at(1));
            try {
                SchemeSweepAccumulator acc(schemes, contexts, rows, cols);
                if (buffered) {
                    const std::size_t rowBytes = cols * (dtypeBits(info.dtype) / 8);
                    const std::size_t blockRows =
                        std::max<std::size_t>(1, kChunkBytes / std::max<std::size_t>(rowBytes, 1));
                    for (std::uint64_t first = 0; first < rows; first += blockRows) {
                        const auto count =
                            static_cast<std::size_t>(std::min<std::uint64_t>(blockRows, rows - first));
                        acc.addRows({info.dtype, m.data + first * rowBytes, count, cols, first, info.name},
                                    threads);
                        advance(count * rowBytes, *m.tensor);
                    }
                } else {
                    RowChunkReader reader(checkpoint, *m.tensor);
                    while (const auto block = reader.next()) {
                        acc.addRows(*block, threads);
                        advance(block->rowCount * cols * reader.elementBytes(), *m.tensor);
                    }
                }
                unit.sqNorm += acc.sqNorm();
                const auto errors = acc.result();
                for (std::size_t i = 0; i < schemes.size(); ++i) {
                    if (errors[i].sqErr) {
                        sqErr[i] += *errors[i].sqErr;
                    } else {
                        nonFinite[i] += errors[i].dequantNonFinite;
                        overflowIn[i] = info.name;
                    }
                }
            } catch (const QuantError& e) {
                rethrowWithFile(e, file.path().string());
            }
            sweep.bytesMeasured += info.byteSize();
        }
        // rel_err of the unit: the members' squared errors and norms add up (a fused set is one matrix).
        std::vector<SweepCandidate> kept;
        for (auto& c : unit.candidates) {
            const auto it = std::find(schemes.begin(), schemes.end(), c.scheme);
            if (it == schemes.end()) {
                kept.push_back(c);
                continue;
            }
            const auto i = static_cast<std::size_t>(it - schemes.begin());
            if (nonFinite[i] > 0) {
                // D overflows the dtype (an int4 -8·s past the dtype's max): unusable unless the user pinned
                // it.
                if (!unit.fixed()) {
                    unit.excluded.push_back(std::string(c.scheme->name) + ": " +
                                            std::to_string(nonFinite[i]) +
                                            " dequantized values overflow the dtype in " + overflowIn[i]);
                    continue;
                }
                c.sqErr = std::numeric_limits<double>::infinity();
            } else {
                c.sqErr = sqErr[i];
            }
            c.relErr = unit.sqNorm > 0 ? std::sqrt(c.sqErr / unit.sqNorm) : 0.0;
            kept.push_back(c);
        }
        unit.candidates = std::move(kept);
        if (unit.candidates.size() == 1 && !unit.fixed()) {
            unit.fixedReason = "must stay BF16: every candidate overflows the dtype";
        }
    }
    sweep.measured = true;
    sweep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    reportProgress(progress, total, total);
}

SweepResult sweepCheckpoint(const Checkpoint& checkpoint, const SweepOptions& options,
                            const ProgressFn& progress)
{
    std::vector<TensorInfo> infos;
    infos.reserve(checkpoint.tensors().size());
    for (const auto& t : checkpoint.tensors()) {
        infos.push_back(t.info);
    }
    auto sweep = prepareSweep(checkpoint.config(), infos, options);
    measureSweep(checkpoint, sweep, options, progress);
    return sweep;
}

} // namespace spark
