#pragma once

#include "core/forward/activations.h"
#include "core/forward/draftspec.h"
#include "core/forward/draftweights.h"
#include "core/forward/linearobserver.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace spark {

/// @brief What a draft computed once per captured sequence, before any anchor: the K/V of every context
/// token in every layer (DFlash/DSpark: built from hidden_norm(fc(aux)); EAGLE-3: its one layer's step 0 at
/// every position, with the inputs step 0 needs again at an anchor).
struct SequenceContext
{
    std::int64_t length = 0;       ///< positions [0, length) are context
    std::vector<Activations> keys; ///< per layer [length, kvHeads·headDim], RoPE applied
    std::vector<Activations> values;
    Activations chainInputs; ///< EAGLE-3: u_t = [norm(embed(x_{t+1})), hidden_norm(fc(f_t))]
    Activations chainHidden; ///< EAGLE-3: fc(f_t)
};

/// @brief A draft's proposals at a batch of anchors.
struct Proposals
{
    std::int64_t anchors = 0;
    int k = 0;
    std::vector<std::int64_t> tokens; ///< [anchors · k], target token ids
    /// [anchors · k, draftVocab] final logits (Markov term included), kept when asked.
    Activations logits;
    std::vector<float> confidence; ///< [anchors · k] DSpark's confidence head (empty without one)

    std::int64_t token(std::int64_t anchor, int position) const { return tokens[anchor * k + position]; }
};

/// @brief How a forward stores its activations between operations.
enum class ForwardNumerics {
    Fp32, ///< FP32 throughout (the reference)
    /// Serving numerics: every activation an operation writes is rounded to BF16 (nearest even), as vLLM
    /// holds a BF16 model's activations; inside an operation (GEMM sums, norms, softmax) FP32 as before, as
    /// vLLM's kernels accumulate in FP32 (draft-forward.md §9).
    Bf16Activations,
};

/// @brief What a draft that conditions on its earlier proposals (EAGLE-3's chain, DSpark's Markov head) is
/// fed for step j > 0.
enum class ProposalFeed {
    OwnProposals, ///< its own greedy proposal of step j − 1, as the serving loop runs it
    /// The captured token at anchor + j: the draft conditioned on the sequence the target continues, as
    /// acceptance at a temperature measures it (draft-forward.md §12). At T = 0 the two agree wherever a
    /// proposal can still be accepted.
    CapturedTokens,
};

/// @brief "fp32" or "bf16"; the inverse parseForwardNumerics() throws std::invalid_argument on others.
const char* forwardNumericsName(ForwardNumerics numerics);
ForwardNumerics parseForwardNumerics(const std::string& name);

/// @brief The reference CPU forward of a speculative draft (draft-forward.md §1–§4): one code path for the
/// BF16 draft and any quantized one (the DraftWeights decide which weights it reads), one graph built from
/// shared blocks and described per architecture by a DraftSpec. FP32 compute on BF16 (or dequantized)
/// storage; greedy ties go to the lowest index, as torch.argmax.
class DraftForward
{
  public:
    /// Reads the draft's small tensors (norms, d2t) and checks every weight it will read exists with the
    /// shape the spec implies. Throws ForwardInputError naming the tensor.
    DraftForward(DraftSpec spec, DraftWeights weights, unsigned threads = 0);
    ~DraftForward();
    DraftForward(DraftForward&&) noexcept;

    const DraftSpec& spec() const { return m_spec; }
    const DraftWeights& weights() const { return m_weights; }
    /// Columns of the aux input: auxLayerIds.size() · targetHidden.
    std::int64_t auxWidth() const;
    /// The target's token id of draft-vocabulary entry @p draftId (d2t; the same id without one).
    std::int64_t targetId(std::int64_t draftId) const;
    /// @brief Every later Linear input goes to @p observer first (nullptr: none; not owned). Embedding
    /// gathers are not Linear inputs.
    void setInputObserver(LinearInputObserver* observer);
    /// @brief How activations are stored (default Fp32).
    void setNumerics(ForwardNumerics numerics) { m_numerics = numerics; }
    ForwardNumerics numerics() const { return m_numerics; }

    /// @brief The context of a sequence for anchors up to @p length (positions [0, length) are context).
    /// @p aux: [≥ length, auxWidth()] captured hidden states in the order of spec().auxLayerIds; @p tokens:
    /// the sequence's token ids (EAGLE-3 reads tokens[1 .. length]).
    SequenceContext buildContext(const Activations& aux, const std::vector<std::int64_t>& tokens,
                                 std::int64_t length) const;

    /// @brief Proposals at @p anchors (each the position of a verify cycle's bonus token, ≥ 1 and ≤
    /// context.length): k tokens predicted for positions anchor + 1 … anchor + k. DFlash: block [bonus,
    /// mask×k]; DSpark: block [anchor, mask×(k−1)] then the Markov walk; EAGLE-3: a chain of k steps.
    /// With ProposalFeed::CapturedTokens, @p tokens must reach anchor + k − 1.
    Proposals propose(const SequenceContext& context, const std::vector<std::int64_t>& tokens,
                      const std::vector<std::int64_t>& anchors, int k, bool keepLogits,
                      ProposalFeed feed = ProposalFeed::OwnProposals) const;

  private:
    struct Layer;
    /// Where a weight source sits in the checkpoint, for the observer.
    struct Site
    {
        std::string module;
        std::int64_t firstRow = 0;
    };
    /// Binds one tensor of the draft's inventory to its place in the graph, checking its shape.
    void bind(const InventoryTensor& tensor);
    std::shared_ptr<const LinearSource> bindLinear(const InventoryTensor& tensor);
    std::vector<float> bindVector(const InventoryTensor& tensor) const;
    /// Rows [first, first + count) of a matrix fused on disk, observed as rows of @p module.
    std::shared_ptr<const LinearSource> bindRows(const std::shared_ptr<const LinearSource>& fused,
                                                 const std::string& module, std::int64_t first,
                                                 std::int64_t count);
    /// linear() with the observer told first.
    Activations apply(const LinearSource& weight, const Activations& input) const;
    // The blocks' operations, their outputs stored under the forward's numerics.
    void stored(Activations& x) const;
    void stored(float* values, std::int64_t count) const;
    Activations normed(Activations x, const std::vector<float>& weight, std::int64_t groupSize = 0) const;
    void norm(Activations& x, const std::vector<float>& weight, std::int64_t groupSize = 0) const;
    void rope(Activations& x, const std::vector<std::int64_t>& positions, const RopeSpec& rope) const;
    void residual(Activations& x, const Activations& y) const;
    Activations swiglu(const Activations& gate, const Activations& up) const;
    Proposals proposeBlock(const SequenceContext& context, const std::vector<std::int64_t>& tokens,
                           const std::vector<std::int64_t>& anchors, int k, bool keepLogits,
                           ProposalFeed feed) const;
    Proposals proposeChain(const SequenceContext& context, const std::vector<std::int64_t>& tokens,
                           const std::vector<std::int64_t>& anchors, int k, bool keepLogits,
                           ProposalFeed feed) const;
    Activations embed(const std::vector<std::int64_t>& ids) const;

    DraftSpec m_spec;
    DraftWeights m_weights;
    unsigned m_threads;
    std::vector<Layer> m_layers;
    std::shared_ptr<const LinearSource> m_embed, m_fc, m_head, m_markovW1, m_markovW2;
    std::vector<float> m_norm, m_hiddenNorm, m_confidence;
    float m_confidenceBias = 0;
    std::vector<std::vector<float>> m_auxNorms;
    std::vector<std::int64_t> m_d2t;
    std::map<const LinearSource*, Site> m_sites;
    LinearInputObserver* m_observer = nullptr;
    ForwardNumerics m_numerics = ForwardNumerics::Fp32;
};

} // namespace spark
