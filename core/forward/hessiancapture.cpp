#include "core/forward/hessiancapture.h"

#include "core/forward/acceptance.h"
#include "core/io/ioerror.h"
#include "core/util/parallel.h"

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <set>
#include <stdexcept>

namespace spark {
namespace {

using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic>; // column-major: X's columns contiguous
using MapF = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

/// Rows of XᵀX one task accumulates. Fixed, so the sums do not depend on the thread count.
constexpr Eigen::Index kPanel = 128;

/// Σ x xᵀ of one input stream: the lower triangle of @c lower holds it.
struct Gram
{
    explicit Gram(Eigen::Index cols) : lower(MatrixD::Zero(cols, cols)) {}
    std::int64_t tokens = 0;
    MatrixD lower;
};

/// lower += XᵀX (lower triangle) for @p x [tokens, cols]: row panels of the triangle in parallel, each its
/// diagonal block by rankUpdate and the block left of it by one product.
void accumulate(MatrixD& lower, const MatrixD& x, unsigned threads)
{
    const Eigen::Index cols = x.cols();
    const Eigen::Index panels = (cols + kPanel - 1) / kPanel;
    // A panel's work grows with its row: pairing light with heavy ones balances parallelFor's contiguous
    // chunks.
    std::vector<Eigen::Index> order;
    for (Eigen::Index i = 0, j = panels - 1; i <= j; ++i, --j) {
        order.push_back(i);
        if (i != j) {
            order.push_back(j);
        }
    }
    parallelFor(order.size(), 1, threads, [&](std::size_t begin, std::size_t end) {
        for (std::size_t o = begin; o < end; ++o) {
            const Eigen::Index r0 = order[o] * kPanel;
            const Eigen::Index n = std::min(kPanel, cols - r0);
            const auto xp = x.middleCols(r0, n);
            lower.block(r0, r0, n, n).selfadjointView<Eigen::Lower>().rankUpdate(xp.transpose());
            if (r0 > 0) {
                lower.block(r0, 0, n, r0).noalias() += xp.transpose() * x.leftCols(r0);
            }
        }
    });
}

/// Accumulates XᵀX per (module, first row) of the wanted modules. Slices that read the same inputs in the
/// same order (k and v of a fused qkv_proj; q/k/v or gate/up of one layer when all are wanted) share one
/// Gram, copied on write when their streams part (k/v's context path, which q does not see).
class HessianAccumulator : public LinearInputObserver
{
  public:
    HessianAccumulator(const std::vector<std::string>& modules, unsigned threads)
        : m_wanted(modules.begin(), modules.end()), m_threads(threads)
    {
    }

    void observe(const std::string& module, std::int64_t firstRow, std::int64_t rowCount,
                 const Activations& input) override
    {
        if (!m_wanted.contains(module) || input.rows == 0) {
            return;
        }
        auto& slice = m_slices[{module, firstRow}];
        slice.rowCount = rowCount;
        // The previous update turned Gram `before` into `after` with this very input: a slice still at
        // `before` ends at `after` without computing anything.
        if (m_last.valid && slice.gram == m_last.before && sameAsLast(input)) {
            slice.gram = m_last.after;
            return;
        }
        m_last = {};
        std::shared_ptr<Gram> before = slice.gram;
        if (!before) {
            slice.gram = std::make_shared<Gram>(input.cols);
        } else if (before.use_count() > 2) { // shared with another slice (this one and `before` aside)
            slice.gram = std::make_shared<Gram>(*before);
        }
        const MatrixD x = MapF(input.values.data(), input.rows, input.cols).cast<double>();
        accumulate(slice.gram->lower, x, m_threads);
        slice.gram->tokens += input.rows;
        // Updated in place, the state `before` is gone and no other slice holds it: nothing to share.
        if (slice.gram != before) {
            m_last = {true, input.rows, input.cols, input.values, std::move(before), slice.gram};
        }
    }

    /// The full symmetric Hessians, one per slice, ordered by module and first row.
    std::map<std::string, std::vector<HessianSlice>> take()
    {
        m_last = {};
        std::map<std::string, std::vector<HessianSlice>> out;
        for (auto& [key, slice] : m_slices) {
            const auto& lower = slice.gram->lower;
            const auto cols = lower.rows();
            HessianSlice h{key.second, slice.rowCount, cols, slice.gram->tokens,
                           std::vector<double>(static_cast<std::size_t>(cols * cols))};
            for (Eigen::Index i = 0; i < cols; ++i) {
                for (Eigen::Index j = 0; j <= i; ++j) {
                    h.xtx[static_cast<std::size_t>(i * cols + j)] = lower(i, j);
                    h.xtx[static_cast<std::size_t>(j * cols + i)] = lower(i, j);
                }
            }
            out[key.first].push_back(std::move(h));
            slice.gram.reset(); // a Gram shared by several slices lives until its last one is copied
        }
        m_slices.clear();
        return out;
    }

  private:
    struct Slice
    {
        std::int64_t rowCount = 0;
        std::shared_ptr<Gram> gram; ///< null: no input yet (the zero state, shared by every fresh slice)
    };
    struct Last
    {
        bool valid = false;
        std::int64_t rows = 0, cols = 0;
        std::vector<float> input;
        std::shared_ptr<Gram> before, after;
    };

    bool sameAsLast(const Activations& input) const
    {
        return input.rows == m_last.rows && input.cols == m_last.cols &&
               std::memcmp(input.values.data(), m_last.input.data(), input.values.size() * sizeof(float)) ==
                   0;
    }

    std::set<std::string> m_wanted;
    unsigned m_threads;
    std::map<std::pair<std::string, std::int64_t>, Slice> m_slices;
    Last m_last;
};

/// Clears the draft's observer however the run ends.
class ObserverScope
{
  public:
    explicit ObserverScope(DraftForward& draft) : m_draft(draft) {}
    ~ObserverScope() { m_draft.setInputObserver(nullptr); }
    ObserverScope(const ObserverScope&) = delete;
    ObserverScope& operator=(const ObserverScope&) = delete;

  private:
    DraftForward& m_draft;
};

/// The requested modules in groups whose Hessians fit @p memoryBytes, in the order given.
std::vector<std::vector<std::string>>
groupModules(const DraftForward& draft, const std::vector<std::string>& modules, std::uint64_t memoryBytes)
{
    std::vector<std::vector<std::string>> groups;
    std::set<std::string> seen;
    std::uint64_t used = 0;
    for (const auto& name : modules) {
        // Gathers, never a Linear input: no Hessian, so no memory.
        if (name == "embed_tokens" || name == "markov_head.markov_w1" || !draft.weights().hasLinear(name) ||
            !seen.insert(name).second) {
            continue;
        }
        const auto cols = static_cast<std::uint64_t>(draft.weights().linear(name)->cols());
        const std::uint64_t slices = draft.spec().fusedQkv && name.ends_with(".self_attn.qkv_proj") ? 3 : 1;
        const std::uint64_t bytes = slices * cols * cols * sizeof(double);
        if (bytes > memoryBytes) {
            throw std::invalid_argument(name + ": its input Hessian" + (slices > 1 ? "s need " : " needs ") +
                                        std::to_string(bytes) + " bytes, more than the memory budget of " +
                                        std::to_string(memoryBytes));
        }
        if (groups.empty() || used + bytes > memoryBytes) {
            groups.emplace_back();
            used = 0;
        }
        groups.back().push_back(name);
        used += bytes;
    }
    return groups;
}

/// The eligible anchors of the first options.samples sequences; with anchorsPerSample, that many per
/// sequence evenly spaced and ending at its last (the longest context, so k/v see every context position).
std::vector<Anchor> chooseAnchors(const HiddenStateCapture& capture, const HessianCaptureOptions& options)
{
    const std::int64_t samples =
        options.samples > 0 ? std::min(options.samples, capture.sampleCount()) : capture.sampleCount();
    std::vector<Anchor> used;
    for (const auto& a : eligibleAnchors(capture, options.k)) {
        if (a.sample < samples) {
            used.push_back(a);
        }
    }
    std::vector<Anchor> out;
    for (const auto& group : anchorsBySample(used)) {
        const auto n = static_cast<std::int64_t>(group.positions.size());
        const std::int64_t m = options.anchorsPerSample > 0 ? std::min(options.anchorsPerSample, n) : n;
        for (std::int64_t i = 0; i < m; ++i) {
            out.push_back({group.sample, group.positions[static_cast<std::size_t>((i + 1) * n / m - 1)]});
        }
    }
    return out;
}

void throwIfCancelled(const ProgressFn& progress, std::uint64_t done, std::uint64_t total)
{
    if (!reportProgress(progress, done, total)) {
        throw IoError(IoErrorKind::Cancelled, "", "Hessian capture cancelled");
    }
}

} // namespace

HessianCaptureResult captureHessians(DraftForward& draft, const HiddenStateCapture& capture,
                                     const std::vector<std::string>& modules,
                                     const HessianCaptureOptions& options)
{
    const auto start = std::chrono::steady_clock::now();
    const auto groups = groupModules(draft, modules, options.memoryBytes);
    // The Hessians need the draft's inputs only, never the target's tokens: no target head required.
    const auto slots = matchCapture(capture, draft.spec(), /*haveTargetHead=*/true);
    const auto anchors = chooseAnchors(capture, options);
    if (anchors.empty()) {
        throw ForwardInputError(capture.info().path.string(), "loss_mask",
                                "no anchor of the sequences used has its bonus token and the " +
                                    std::to_string(options.k) +
                                    " following tokens inside the generated region");
    }
    const auto bySample = anchorsBySample(anchors);

    HessianCaptureResult result;
    result.samples = static_cast<std::int64_t>(bySample.size());
    result.anchors = static_cast<std::int64_t>(anchors.size());
    result.passes = static_cast<std::int64_t>(groups.size());
    const std::uint64_t total = anchors.size() * groups.size();
    std::uint64_t done = 0;
    throwIfCancelled(options.progress, done, total);
    const unsigned threads = resolveThreads(static_cast<int>(options.threads));
    const ObserverScope scope(draft);
    // The same contexts and batches as evaluateAnchors, so every Linear sees what offline acceptance runs.
    const auto batch = static_cast<std::size_t>(AcceptanceOptions{}.batchAnchors);
    for (const auto& group : groups) {
        HessianAccumulator accumulator(group, threads);
        draft.setInputObserver(&accumulator);
        for (const auto& group : bySample) {
            const auto seq = capture.sequence(group.sample);
            const std::int64_t length = group.contextLength();
            const SequenceContext context =
                draft.buildContext(capture.hidden(group.sample, slots, length), seq.tokens, length);
            group.forEachBatch(batch, [&](const std::vector<std::int64_t>& part, std::size_t) {
                draft.propose(context, seq.tokens, part, options.k, false);
                done += part.size();
                throwIfCancelled(options.progress, done, total);
            });
        }
        draft.setInputObserver(nullptr);
        if (options.onPass) {
            options.onPass(accumulator.take());
            continue;
        }
        for (auto& [name, slices] : accumulator.take()) {
            result.modules[name] = std::move(slices);
        }
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

} // namespace spark
