#include "core/forward/acceptance.h"

#include "core/forward/expectedacceptance.h"
#include "core/io/ioerror.h"
#include "core/io/safetensorsfilewriter.h"
#include "core/util/splitmix.h"
#include "core/util/statistics.h"
#include "core/util/textformat.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>

namespace spark {
namespace {

/// Whether the captured next tokens are the targets a proposal is counted against: on greedy data, and at
/// a temperature (where they are the sequence the target continues); else the target's argmax is.
bool tokensAreTargets(const HiddenStateCapture& capture, double temperature)
{
    return capture.info().greedy || temperature > 0;
}

/// y_1..y_k at an anchor: the next tokens (@p tokens), else the stored target argmax.
std::vector<std::int64_t> targetsAt(const CapturedSequence& seq, std::int64_t anchor, int k, bool tokens)
{
    std::vector<std::int64_t> y;
    for (int j = 1; j <= k; ++j) {
        y.push_back(tokens ? seq.tokens[anchor + j] : seq.targetArgmax[anchor + j - 1]);
    }
    return y;
}

bool eligible(const CapturedSequence& seq, std::int64_t a, int k, bool greedy)
{
    const auto length = static_cast<std::int64_t>(seq.tokens.size());
    const std::int64_t last = greedy ? a + k : a + k - 1; // the last position whose token or argmax is read
    if (a < 1 || last > length - 1) {
        return false;
    }
    for (std::int64_t t = a; t <= last; ++t) {
        if (seq.lossMask[t] == 0) {
            return false;
        }
    }
    return true;
}

/// The softmax of @p row / @p temperature, FP64.
std::vector<double> softmaxAt(const float* row, std::int64_t n, double temperature)
{
    const double top = *std::max_element(row, row + n);
    std::vector<double> p(static_cast<std::size_t>(n));
    double sum = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        p[i] = std::exp((row[i] - top) / temperature);
        sum += p[i];
    }
    for (auto& v : p) {
        v /= sum;
    }
    return p;
}

/// α_j of proposal j at one anchor (draft-forward.md §12): the target's probability at T of the greedy
/// draft token, or Σ_v min(p_T(v), q_T(v)) for a draft that samples at T (standard rejection sampling's
/// acceptance probability). @p target: the target's logits predicting the proposal's position.
double acceptanceProbability(const DraftForward& draft, const Proposals& proposals, std::int64_t index, int j,
                             const float* target, std::int64_t targetVocab, const AcceptanceOptions& options)
{
    if (options.drafting == DraftSampling::Greedy) {
        const double top = *std::max_element(target, target + targetVocab);
        double sum = 0;
        for (std::int64_t v = 0; v < targetVocab; ++v) {
            sum += std::exp((target[v] - top) / options.temperature);
        }
        return std::exp((target[proposals.token(index, j)] - top) / options.temperature) / sum;
    }
    const auto p = softmaxAt(target, targetVocab, options.temperature);
    const auto q =
        softmaxAt(proposals.logits.row(index * proposals.k + j), proposals.logits.cols, options.temperature);
    double overlap = 0;
    for (std::int64_t v = 0; v < proposals.logits.cols; ++v) {
        overlap += std::min(p[static_cast<std::size_t>(draft.targetId(v))], q[static_cast<std::size_t>(v)]);
    }
    return overlap;
}

float topMargin(const float* row, std::int64_t n)
{
    float first = -std::numeric_limits<float>::infinity(), second = first;
    for (std::int64_t i = 0; i < n; ++i) {
        if (row[i] > first) {
            second = first;
            first = row[i];
        } else if (row[i] > second) {
            second = row[i];
        }
    }
    return first - second;
}

/// KL(p ‖ q) of the softmaxes of two logit rows, FP64 sums (draft-forward.md §9).
double klDivergence(const float* p, const float* q, std::int64_t n)
{
    const double pMax = *std::max_element(p, p + n);
    const double qMax = *std::max_element(q, q + n);
    double pSum = 0, qSum = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        pSum += std::exp(p[i] - pMax);
        qSum += std::exp(q[i] - qMax);
    }
    const double pLog = pMax + std::log(pSum);
    const double qLog = qMax + std::log(qSum);
    double kl = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const double lp = p[i] - pLog;
        kl += std::exp(lp) * (lp - (q[i] - qLog));
    }
    return std::max(0.0, kl);
}

DraftOutcome outcomeOf(const Proposals& proposals, std::int64_t index,
                       const std::vector<std::int64_t>& targets)
{
    DraftOutcome out;
    const int k = proposals.k;
    for (int j = 0; j < k; ++j) {
        out.tokens.push_back(proposals.token(index, j));
        out.topMargin.push_back(topMargin(proposals.logits.row(index * k + j), proposals.logits.cols));
        if (!proposals.confidence.empty()) {
            out.confidence.push_back(proposals.confidence[index * k + j]);
        }
    }
    while (out.accepted < k && out.tokens[out.accepted] == targets[out.accepted]) {
        ++out.accepted;
    }
    return out;
}

/// A captured sequence with the target's tokens recomputed when the capture does not carry them and they
/// are the targets.
CapturedSequence loadSequence(const HiddenStateCapture& capture, std::int64_t sample,
                              const AcceptanceOptions& options)
{
    auto seq = capture.sequence(sample);
    if (!tokensAreTargets(capture, options.temperature) && seq.targetArgmax.empty() && options.targetHead) {
        seq.targetArgmax = options.targetHead->argmax(capture, sample);
    }
    return seq;
}

ProposalFeed feedOf(const AcceptanceOptions& options)
{
    return options.temperature > 0 || !options.scoreTemperatures.empty() ? ProposalFeed::CapturedTokens
                                                                         : ProposalFeed::OwnProposals;
}

/// At a temperature: α_j of every proposal at one anchor (row @p index of @p proposals), from the target's
/// logits predicting each (rows index · k + j of @p targetLogits).
void addAcceptance(DraftOutcome& outcome, const DraftForward& draft, const Proposals& proposals,
                   std::int64_t index, const Activations& targetLogits, const AcceptanceOptions& options)
{
    for (int j = 0; j < proposals.k; ++j) {
        outcome.acceptance.push_back(acceptanceProbability(draft, proposals, index, j,
                                                           targetLogits.row(index * proposals.k + j),
                                                           targetLogits.cols, options));
    }
}

/// The target's logits for the proposals at @p positions of @p sample: [positions · k, V].
Activations targetLogitsAt(const HiddenStateCapture& capture, std::int64_t sample,
                           const std::vector<std::int64_t>& positions, const AcceptanceOptions& options)
{
    std::vector<std::int64_t> rows;
    for (const auto a : positions) {
        for (int j = 0; j < options.k; ++j) {
            rows.push_back(a + j);
        }
    }
    return options.targetHead->logits(capture, sample, rows);
}

/// Checks what a run at a temperature needs before any work.
void requireSamplingInputs(const HiddenStateCapture& capture, const AcceptanceOptions& options)
{
    if (options.temperature < 0 || !std::isfinite(options.temperature)) {
        throw std::invalid_argument("temperature " + std::to_string(options.temperature) +
                                    ": must be a finite number ≥ 0");
    }
    if (options.temperature > 0 && options.targetHead == nullptr) {
        throw ForwardInputError(
            capture.info().path.string(), "target model",
            "acceptance at a temperature needs the target's distribution: give the target "
            "model (--target-model in the CLI, the Target field in the app), whose final "
            "norm and head read the capture's last layer");
    }
    for (const double t : options.scoreTemperatures) {
        if (!(t > 0) || !std::isfinite(t)) {
            throw std::invalid_argument("objective temperature " + std::to_string(t) +
                                        ": must be a finite number > 0");
        }
    }
    if (!options.scoreTemperatures.empty() && options.temperature > 0) {
        throw std::invalid_argument("the target-aware objective is measured against the target's greedy "
                                    "tokens (temperature 0)");
    }
}

/// a_i with its 95 % interval: Wilson's for greedy counts, the normal one for means of ∏ α_j.
void setShare(double& mean, double& low, double& high, const std::vector<double>& shares, bool sampled)
{
    const auto n = static_cast<double>(shares.size());
    if (sampled) {
        const auto m = pairedMeanInterval(shares);
        mean = m.mean;
        low = std::max(0.0, m.low);
        high = std::min(1.0, m.high);
        return;
    }
    mean = n > 0 ? std::accumulate(shares.begin(), shares.end(), 0.0) / n : 0;
    const auto w = wilsonInterval(mean, n);
    low = w.low;
    high = w.high;
}

void throwIfCancelled(const ProgressFn& progress, std::uint64_t done, std::uint64_t total)
{
    if (!reportProgress(progress, done, total)) {
        throw IoError(IoErrorKind::Cancelled, "", "offline acceptance cancelled");
    }
}

/// The objective's statistics per draft temperature the outcomes carry.
std::vector<ObjectiveStats> summarizeObjective(const std::vector<AnchorOutcome>& outcomes, bool paired,
                                               std::span<const double> temperatures)
{
    std::vector<ObjectiveStats> out;
    for (std::size_t t = 0; t < temperatures.size() && !outcomes.empty(); ++t) {
        if (outcomes.front().base.targetProbability.size() != temperatures.size()) {
            throw std::invalid_argument("the outcomes carry no objective at the temperatures asked");
        }
        ObjectiveStats st;
        st.temperature = temperatures[t];
        std::vector<double> base, diffs;
        double quant = 0;
        for (const auto& o : outcomes) {
            base.push_back(expectedAccepted(o.base.targetProbability[t]));
            if (paired) {
                const double q = expectedAccepted(o.quantized->targetProbability[t]);
                quant += q;
                diffs.push_back(q - base.back());
            }
        }
        const auto n = static_cast<double>(outcomes.size());
        st.base = std::accumulate(base.begin(), base.end(), 0.0) / n;
        if (paired) {
            st.quant = quant / n;
            const auto d = pairedMeanInterval(diffs);
            st.delta = d.mean;
            st.deltaLow = d.low;
            st.deltaHigh = d.high;
        }
        out.push_back(st);
    }
    return out;
}

} // namespace

std::int64_t SampleAnchors::contextLength() const
{
    return positions.empty() ? 0 : *std::max_element(positions.begin(), positions.end());
}

std::vector<SampleAnchors> anchorsBySample(const std::vector<Anchor>& anchors)
{
    std::map<std::int64_t, SampleAnchors> groups;
    for (std::size_t i = 0; i < anchors.size(); ++i) {
        auto& group = groups[anchors[i].sample];
        group.sample = anchors[i].sample;
        group.positions.push_back(anchors[i].position);
        group.indices.push_back(i);
    }
    std::vector<SampleAnchors> out;
    for (auto& [sample, group] : groups) {
        out.push_back(std::move(group));
    }
    return out;
}

const char* draftSamplingName(DraftSampling sampling)
{
    return sampling == DraftSampling::Greedy ? "greedy" : "probabilistic";
}

DraftSampling parseDraftSampling(const std::string& name)
{
    for (const auto s : {DraftSampling::Greedy, DraftSampling::Probabilistic}) {
        if (name == draftSamplingName(s)) {
            return s;
        }
    }
    throw std::invalid_argument("draft sampling '" + name + "': greedy or probabilistic");
}

std::string samplingContextNote(const CaptureInfo& info, double temperature)
{
    if (temperature <= 0) {
        return {};
    }
    const std::string at = "at T = " + formatFixed(temperature, 2);
    if (info.greedy) {
        return "the capture holds the target's greedy continuations: " + at +
               " the draft is judged on greedy text, not on what the target writes when it samples, which "
               "overstates acceptance (docs/acceptance.md); capture the target sampling " +
               at + " for the served contexts";
    }
    if (info.temperature && std::abs(*info.temperature - temperature) > 1e-9) {
        return "the capture was sampled at T = " + formatFixed(*info.temperature, 2) +
               ", acceptance is measured " + at;
    }
    return {};
}

double acceptedShare(const DraftOutcome& outcome, int i)
{
    if (outcome.acceptance.empty()) {
        return outcome.accepted > i ? 1.0 : 0.0;
    }
    double product = 1;
    for (int j = 0; j <= i; ++j) {
        product *= outcome.acceptance[static_cast<std::size_t>(j)];
    }
    return product;
}

std::vector<Anchor> eligibleAnchors(const HiddenStateCapture& capture, int k, double temperature)
{
    std::vector<Anchor> out;
    const bool greedy = tokensAreTargets(capture, temperature);
    for (std::int64_t s = 0; s < capture.sampleCount(); ++s) {
        const auto seq = capture.sequence(s);
        for (std::int64_t a = 1; a < static_cast<std::int64_t>(seq.tokens.size()); ++a) {
            if (eligible(seq, a, k, greedy)) {
                out.push_back({s, a});
            }
        }
    }
    return out;
}

std::vector<std::int64_t> samplesOf(const std::vector<Anchor>& anchors)
{
    std::vector<std::int64_t> samples;
    for (const auto& a : anchors) {
        samples.push_back(a.sample);
    }
    std::sort(samples.begin(), samples.end());
    samples.erase(std::unique(samples.begin(), samples.end()), samples.end());
    return samples;
}

std::vector<Anchor> sampleAnchors(const std::vector<Anchor>& eligibleList, std::int64_t count,
                                  std::uint64_t seed)
{
    std::vector<Anchor> pool = eligibleList;
    if (count <= 0 || count >= static_cast<std::int64_t>(pool.size())) {
        return pool;
    }
    // Partial Fisher–Yates with splitmix64: the same seed draws the same anchors everywhere.
    std::uint64_t state = seed ^ 0xA5A5A5A5DEADBEEFull;
    for (std::int64_t i = 0; i < count; ++i) {
        const auto remaining = static_cast<std::uint64_t>(pool.size()) - static_cast<std::uint64_t>(i);
        const auto j = static_cast<std::size_t>(i) + static_cast<std::size_t>(splitmix64(state) % remaining);
        std::swap(pool[static_cast<std::size_t>(i)], pool[j]);
    }
    pool.resize(static_cast<std::size_t>(count));
    std::sort(pool.begin(), pool.end());
    return pool;
}

std::vector<int> matchCapture(const HiddenStateCapture& capture, const DraftSpec& spec, bool haveTargetHead)
{
    const auto& info = capture.info();
    const auto slots = capture.slotsOf(spec.auxLayerIds, spec.auxLayerIdsSource);
    if (info.hiddenSize != spec.targetHidden) {
        throw ForwardInputError(info.path.string(), "hidden_states",
                                "hidden size " + std::to_string(info.hiddenSize) +
                                    " does not fit the draft's fc (" +
                                    std::to_string(spec.auxLayerIds.size()) + " × " +
                                    std::to_string(spec.targetHidden) + " inputs)");
    }
    if (!info.greedy && !info.hasTargetArgmax && !haveTargetHead) {
        throw ForwardInputError(
            info.path.string(), "target_argmax",
            "missing, and the capture is not greedy (greedy = false): the target's tokens "
            "are unknown; capture at temperature 0, store target_argmax, or give the target "
            "(--target-model in the CLI, the Target field in the app) with the last layer captured");
    }
    return slots;
}

std::vector<AnchorOutcome> evaluateAnchors(const DraftForward& base, const DraftForward* quantized,
                                           const HiddenStateCapture& capture,
                                           const std::vector<Anchor>& anchors,
                                           const AcceptanceOptions& options)
{
    const auto slots = matchCapture(capture, base.spec(), options.targetHead != nullptr);
    requireSamplingInputs(capture, options);
    const bool greedy = tokensAreTargets(capture, options.temperature);
    const bool sampling = options.temperature > 0;
    const auto feed = feedOf(options);
    const int k = options.k;
    std::vector<AnchorOutcome> outcomes(anchors.size());
    std::uint64_t done = 0;
    throwIfCancelled(options.progress, 0, anchors.size());
    const auto batch = static_cast<std::size_t>(std::max<std::int64_t>(1, options.batchAnchors));
    // The reference's batches from an earlier run on these anchors, or those this run computes (kept only
    // when they are to be stored, as they hold every anchor's logits).
    const auto stored = options.reference ? options.reference->find(anchors, batch) : nullptr;
    const auto logitBytes = static_cast<std::uint64_t>(anchors.size()) * static_cast<std::uint64_t>(k) *
                            static_cast<std::uint64_t>(base.spec().draftVocab) * sizeof(float);
    const bool keep = options.reference && !stored && options.reference->hasRoomFor(logitBytes);
    std::vector<Proposals> computed;
    std::size_t batchIndex = 0;
    for (const auto& group : anchorsBySample(anchors)) {
        const auto sample = group.sample;
        const auto seq = loadSequence(capture, sample, options);
        for (const auto position : group.positions) {
            if (!eligible(seq, position, k, greedy)) {
                throw std::invalid_argument("anchor " + std::to_string(position) + " of sample " +
                                            std::to_string(sample) +
                                            " is not eligible at k = " + std::to_string(k));
            }
        }
        const std::int64_t length = group.contextLength();
        const Activations aux = capture.hidden(sample, slots, length);
        const auto baseContext =
            stored ? std::nullopt : std::optional(base.buildContext(aux, seq.tokens, length));
        const auto quantContext =
            quantized ? std::optional(quantized->buildContext(aux, seq.tokens, length)) : std::nullopt;
        group.forEachBatch(batch, [&](const std::vector<std::int64_t>& positions, std::size_t first) {
            const Proposals& b =
                stored
                    ? (*stored)[batchIndex]
                    : computed.emplace_back(base.propose(*baseContext, seq.tokens, positions, k, true, feed));
            ++batchIndex;
            const auto q =
                quantized
                    ? std::optional(quantized->propose(*quantContext, seq.tokens, positions, k, true, feed))
                    : std::nullopt;
            const auto targetLogits =
                sampling ? targetLogitsAt(capture, sample, positions, options) : Activations();
            for (std::size_t i = 0; i < positions.size(); ++i) {
                auto& out = outcomes[group.indices[first + i]];
                out.anchor = {sample, positions[i]};
                out.targets = targetsAt(seq, positions[i], k, greedy);
                const auto row = static_cast<std::int64_t>(i);
                out.base = outcomeOf(b, row, out.targets);
                out.base.targetProbability =
                    targetProbabilities(base, b, row, out.targets, options.scoreTemperatures);
                if (sampling) {
                    addAcceptance(out.base, base, b, row, targetLogits, options);
                }
                if (q) {
                    out.quantized = outcomeOf(*q, row, out.targets);
                    out.quantized->targetProbability =
                        targetProbabilities(*quantized, *q, row, out.targets, options.scoreTemperatures);
                    if (sampling) {
                        addAcceptance(*out.quantized, *quantized, *q, row, targetLogits, options);
                    }
                    bool samePrefix = true;
                    for (int j = 0; j < k; ++j) {
                        out.kl.push_back(samePrefix ? klDivergence(b.logits.row(row * k + j),
                                                                   q->logits.row(row * k + j), b.logits.cols)
                                                    : std::numeric_limits<double>::quiet_NaN());
                        samePrefix = samePrefix && out.base.tokens[j] == out.quantized->tokens[j];
                    }
                }
            }
            if (!keep) {
                computed.clear();
            }
            done += positions.size();
            throwIfCancelled(options.progress, done, anchors.size());
        });
    }
    if (keep) {
        options.reference->store(anchors, batch, std::move(computed));
    }
    return outcomes;
}

std::shared_ptr<const std::vector<Proposals>> ReferenceProposals::find(const std::vector<Anchor>& anchors,
                                                                       std::size_t batch) const
{
    const std::lock_guard lock(m_mutex);
    const auto it = m_runs.find({anchors, batch});
    return it == m_runs.end() ? nullptr : it->second;
}

bool ReferenceProposals::hasRoomFor(std::uint64_t bytes) const
{
    const std::lock_guard lock(m_mutex);
    return m_bytes + bytes <= m_maxBytes;
}

void ReferenceProposals::store(const std::vector<Anchor>& anchors, std::size_t batch,
                               std::vector<Proposals> batches)
{
    std::uint64_t bytes = 0;
    for (const auto& b : batches) {
        bytes += b.logits.values.size() * sizeof(float);
    }
    const std::lock_guard lock(m_mutex);
    auto& slot = m_runs[{anchors, batch}];
    if (!slot) {
        m_bytes += bytes;
        slot = std::make_shared<const std::vector<Proposals>>(std::move(batches));
    }
}

std::vector<AnchorOutcome> replayLoop(const DraftForward& draft, const HiddenStateCapture& capture,
                                      const AcceptanceOptions& options)
{
    const auto slots = matchCapture(capture, draft.spec(), options.targetHead != nullptr);
    requireSamplingInputs(capture, options);
    const bool greedy = tokensAreTargets(capture, options.temperature);
    const int k = options.k;
    std::vector<AnchorOutcome> outcomes;
    for (std::int64_t s = 0; s < capture.sampleCount(); ++s) {
        const auto seq = loadSequence(capture, s, options);
        const auto length = static_cast<std::int64_t>(seq.tokens.size());
        std::int64_t last = 0;
        for (std::int64_t a = 1; a < length; ++a) {
            if (eligible(seq, a, k, greedy)) {
                last = a;
            }
        }
        if (last == 0) {
            continue;
        }
        const Activations aux = capture.hidden(s, slots, last);
        const SequenceContext context = draft.buildContext(aux, seq.tokens, last);
        std::int64_t a = 1;
        while (true) {
            while (a <= last && !eligible(seq, a, k, greedy)) {
                ++a; // the loop starts (and restarts after a gap) at the next generated position
            }
            if (a > last) {
                break;
            }
            const Proposals p = draft.propose(context, seq.tokens, {a}, k, true, feedOf(options));
            AnchorOutcome out;
            out.anchor = {s, a};
            out.targets = targetsAt(seq, a, k, greedy);
            out.base = outcomeOf(p, 0, out.targets);
            if (options.temperature > 0) {
                addAcceptance(out.base, draft, p, 0, targetLogitsAt(capture, s, {a}, options), options);
            }
            a += out.base.accepted + 1;
            outcomes.push_back(std::move(out));
        }
        throwIfCancelled(options.progress, static_cast<std::uint64_t>(s + 1),
                         static_cast<std::uint64_t>(capture.sampleCount()));
    }
    return outcomes;
}

AcceptanceSummary summarizeAcceptance(const std::vector<AnchorOutcome>& outcomes, int k,
                                      std::span<const double> scoreTemperatures)
{
    AcceptanceSummary summary;
    summary.anchors = static_cast<std::int64_t>(outcomes.size());
    summary.k = k;
    summary.paired = !outcomes.empty() && std::all_of(outcomes.begin(), outcomes.end(),
                                                      [](const auto& o) { return o.quantized.has_value(); });
    summary.sampled = !outcomes.empty() && !outcomes.front().base.acceptance.empty();
    const auto n = static_cast<double>(outcomes.size());
    summary.tauBase = summary.tauQuant = 1;
    for (int i = 0; i < k; ++i) {
        PositionStats st;
        std::vector<double> sharesB, sharesQ, diffs;
        std::vector<float> margins;
        double klSum = 0, confB = 0, confQ = 0;
        std::int64_t flips = 0, acceptedQ = 0, confCount = 0;
        for (const auto& o : outcomes) {
            const bool b = o.base.accepted > i;
            st.baseAccepted += b ? 1 : 0;
            sharesB.push_back(acceptedShare(o.base, i));
            margins.push_back(o.base.topMargin[i]);
            if (!o.base.confidence.empty()) {
                confB += o.base.confidence[i];
                ++confCount;
            }
            if (!summary.paired) {
                continue;
            }
            const auto& q = *o.quantized;
            acceptedQ += q.accepted > i ? 1 : 0;
            sharesQ.push_back(acceptedShare(q, i));
            diffs.push_back(sharesQ.back() - sharesB.back());
            if (b && !std::equal(o.base.tokens.begin(), o.base.tokens.begin() + i + 1, q.tokens.begin())) {
                ++flips;
            }
            if (!std::isnan(o.kl[i])) {
                klSum += o.kl[i];
                ++st.klAnchors;
            }
            if (!q.confidence.empty()) {
                confQ += q.confidence[i];
            }
        }
        setShare(st.acceptBase, st.acceptBaseLow, st.acceptBaseHigh, sharesB, summary.sampled);
        if (summary.sampled) {
            st.countedBase = n > 0 ? static_cast<double>(st.baseAccepted) / n : 0;
        }
        st.marginP10 = interpolatedQuantile(margins, 0.1);
        st.marginP50 = interpolatedQuantile(margins, 0.5);
        st.marginP90 = interpolatedQuantile(margins, 0.9);
        st.confidenceBase = confCount > 0 ? confB / static_cast<double>(confCount) : 0;
        summary.tauBase += st.acceptBase;
        if (summary.paired) {
            setShare(st.acceptQuant, st.acceptQuantLow, st.acceptQuantHigh, sharesQ, summary.sampled);
            if (summary.sampled) {
                st.countedQuant = static_cast<double>(acceptedQ) / n;
            }
            const auto delta = pairedMeanInterval(diffs);
            st.delta = delta.mean;
            st.deltaLow = delta.low;
            st.deltaHigh = delta.high;
            st.flipRate =
                st.baseAccepted > 0 ? static_cast<double>(flips) / static_cast<double>(st.baseAccepted) : 0;
            st.lowerBound = summary.sampled ? 0 : st.acceptBase * (1 - st.flipRate);
            st.meanKl = st.klAnchors > 0 ? klSum / static_cast<double>(st.klAnchors) : 0;
            st.confidenceQuant = confCount > 0 ? confQ / static_cast<double>(confCount) : 0;
            summary.tauQuant += st.acceptQuant;
        }
        summary.positions.push_back(st);
    }
    if (summary.paired) {
        std::vector<double> d;
        for (const auto& o : outcomes) {
            double change = 0; // L_Q − L_B, or at a temperature E[L_Q] − E[L_B]
            for (int i = 0; i < k; ++i) {
                change += acceptedShare(*o.quantized, i) - acceptedShare(o.base, i);
            }
            d.push_back(change);
        }
        const auto tau = pairedMeanInterval(d);
        summary.tauDelta = tau.mean;
        summary.tauDeltaLow = tau.low;
        summary.tauDeltaHigh = tau.high;
    }
    summary.objective = summarizeObjective(outcomes, summary.paired, scoreTemperatures);
    return summary;
}

void dumpLogits(const std::filesystem::path& path, const DraftForward& base, const DraftForward* quantized,
                const HiddenStateCapture& capture, const std::vector<Anchor>& anchors, int k)
{
    const auto slots = matchCapture(capture, base.spec(), true); // no targets are read here
    const auto m = static_cast<std::uint64_t>(anchors.size());
    const auto vocab = static_cast<std::uint64_t>(base.spec().draftVocab);
    const auto uk = static_cast<std::uint64_t>(k);
    std::vector<std::int64_t> samples(m), positions(m), tokensB(m * uk), tokensQ(m * uk);
    std::vector<float> logitsB(m * uk * vocab), logitsQ(m * uk * vocab);
    for (const auto& group : anchorsBySample(anchors)) {
        const auto seq = capture.sequence(group.sample);
        const std::int64_t length = group.contextLength();
        const Activations aux = capture.hidden(group.sample, slots, length);
        const auto run = [&](const DraftForward& draft, std::vector<std::int64_t>& tokens,
                             std::vector<float>& logits) {
            const Proposals p = draft.propose(draft.buildContext(aux, seq.tokens, length), seq.tokens,
                                              group.positions, k, true);
            for (std::size_t i = 0; i < group.positions.size(); ++i) {
                const auto index = group.indices[i];
                for (int j = 0; j < k; ++j) {
                    tokens[index * uk + static_cast<std::uint64_t>(j)] =
                        p.token(static_cast<std::int64_t>(i), j);
                }
                std::copy_n(p.logits.row(static_cast<std::int64_t>(i) * k), uk * vocab,
                            logits.data() + index * uk * vocab);
            }
        };
        run(base, tokensB, logitsB);
        if (quantized) {
            run(*quantized, tokensQ, logitsQ);
        }
        for (std::size_t i = 0; i < group.positions.size(); ++i) {
            samples[group.indices[i]] = group.sample;
            positions[group.indices[i]] = group.positions[i];
        }
    }
    std::vector<TensorBytes> tensors{
        {{"anchor_sample", DType::I64, {m}}, bytesOf(samples)},
        {{"anchor_position", DType::I64, {m}}, bytesOf(positions)},
        {{"tokens_base", DType::I64, {m, uk}}, bytesOf(tokensB)},
        {{"logits_base", DType::F32, {m, uk, vocab}}, bytesOf(logitsB)},
    };
    if (quantized) {
        tensors.push_back({{"tokens_quantized", DType::I64, {m, uk}}, bytesOf(tokensQ)});
        tensors.push_back({{"logits_quantized", DType::F32, {m, uk, vocab}}, bytesOf(logitsQ)});
    }
    writeSafetensorsFile(
        path, std::move(tensors),
        {{"format", "sparkulator.logits/1"},
         {"architecture", base.spec().archId},
         {"k", std::to_string(k)},
         {"vocabulary",
          vocab == static_cast<std::uint64_t>(base.spec().vocab) ? "target" : "draft (map with d2t)"}});
}

} // namespace spark
