#include "core/forward/draftforward.h"

#include "core/forward/bf16kernel.h"
#include "core/forward/blocks.h"
#include "core/io/floatconv.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace spark {

/// One decoder layer's weights.
struct DraftForward::Layer
{
    std::shared_ptr<const LinearSource> q, k, v, o, g, gate, up, down;
    std::vector<float> inputNorm, postNorm, qNorm, kNorm;
};

namespace {

std::int64_t argmaxRow(const float* row, std::int64_t n)
{
    std::int64_t best = 0;
    for (std::int64_t i = 1; i < n; ++i) {
        if (row[i] > row[best]) { // strict: ties keep the lowest index, as torch.argmax
            best = i;
        }
    }
    return best;
}

Activations concatColumns(const Activations& a, const Activations& b)
{
    Activations out(a.rows, a.cols + b.cols);
    for (std::int64_t r = 0; r < a.rows; ++r) {
        std::copy_n(a.row(r), a.cols, out.row(r));
        std::copy_n(b.row(r), b.cols, out.row(r) + a.cols);
    }
    return out;
}

} // namespace

const char* forwardNumericsName(ForwardNumerics numerics)
{
    return numerics == ForwardNumerics::Fp32 ? "fp32" : "bf16";
}

ForwardNumerics parseForwardNumerics(const std::string& name)
{
    if (name == "fp32") {
        return ForwardNumerics::Fp32;
    }
    if (name == "bf16") {
        return ForwardNumerics::Bf16Activations;
    }
    throw std::invalid_argument("numerics '" + name + "': fp32 or bf16");
}

Activations DraftForward::apply(const LinearSource& weight, const Activations& input) const
{
    if (m_observer) {
        const auto& site = m_sites.at(&weight);
        m_observer->observe(site.module, site.firstRow, weight.rows(), input);
    }
    Activations y = m_numerics == ForwardNumerics::Bf16Activations ? linearBf16(weight, input, m_threads)
                                                                   : linear(weight, input, m_threads);
    stored(y);
    return y;
}

void DraftForward::stored(float* values, std::int64_t count) const
{
    if (m_numerics == ForwardNumerics::Bf16Activations) {
        kernels::roundToBf16(values, static_cast<std::size_t>(count));
    }
}

void DraftForward::stored(Activations& x) const
{
    stored(x.values.data(), static_cast<std::int64_t>(x.values.size()));
}

Activations DraftForward::normed(Activations x, const std::vector<float>& weight,
                                 std::int64_t groupSize) const
{
    norm(x, weight, groupSize);
    return x;
}

void DraftForward::norm(Activations& x, const std::vector<float>& weight, std::int64_t groupSize) const
{
    rmsNorm(x, weight, m_spec.eps, groupSize);
    stored(x);
}

void DraftForward::rope(Activations& x, const std::vector<std::int64_t>& positions,
                        const RopeSpec& rope) const
{
    applyRope(x, positions, m_spec.headDim, rope);
    stored(x);
}

void DraftForward::residual(Activations& x, const Activations& y) const
{
    addInPlace(x, y);
    stored(x);
}

Activations DraftForward::swiglu(const Activations& gate, const Activations& up) const
{
    Activations y = siluAndMul(gate, up);
    stored(y);
    return y;
}

void DraftForward::setInputObserver(LinearInputObserver* observer)
{
    m_observer = observer;
}

DraftForward::DraftForward(DraftSpec spec, DraftWeights weights, unsigned threads)
    : m_spec(std::move(spec)), m_weights(std::move(weights)),
      m_threads(resolveThreads(static_cast<int>(threads)))
{
    m_layers.resize(static_cast<std::size_t>(m_spec.layers));
    for (const auto& tensor : draftInventory(m_spec)) {
        bind(tensor);
    }
}

std::shared_ptr<const LinearSource> DraftForward::bindLinear(const InventoryTensor& tensor)
{
    auto source = m_weights.linear(tensor.module());
    const auto rows = tensor.shape[0], cols = tensor.shape[1];
    if (source->rows() != rows || source->cols() != cols) {
        throw ForwardInputError(m_weights.draft().folder().string(), tensor.name,
                                "is [" + std::to_string(source->rows()) + ", " +
                                    std::to_string(source->cols()) + "], the config implies [" +
                                    std::to_string(rows) + ", " + std::to_string(cols) + "]");
    }
    m_sites[source.get()] = {tensor.module(), 0};
    return source;
}

std::vector<float> DraftForward::bindVector(const InventoryTensor& tensor) const
{
    auto values = m_weights.vector(tensor.name);
    std::int64_t expected = 1;
    for (const auto d : tensor.shape) {
        expected *= d;
    }
    if (static_cast<std::int64_t>(values.size()) != expected) {
        throw ForwardInputError(m_weights.draft().folder().string(), tensor.name,
                                "has " + std::to_string(values.size()) + " values, the config implies " +
                                    std::to_string(expected));
    }
    return values;
}

std::shared_ptr<const LinearSource> DraftForward::bindRows(const std::shared_ptr<const LinearSource>& fused,
                                                           const std::string& module, std::int64_t first,
                                                           std::int64_t count)
{
    auto slice = rowSlice(fused, first, count);
    m_sites[slice.get()] = {module, first};
    return slice;
}

void DraftForward::bind(const InventoryTensor& tensor)
{
    using R = DraftTensorRole;
    using Source = std::shared_ptr<const LinearSource>;
    // Where each role's weight lives; the roles that split or collect are handled below.
    static const std::map<R, Source Layer::*> layerLinears{
        {R::Q, &Layer::q}, {R::K, &Layer::k},       {R::V, &Layer::v},   {R::O, &Layer::o},
        {R::G, &Layer::g}, {R::Gate, &Layer::gate}, {R::Up, &Layer::up}, {R::Down, &Layer::down}};
    static const std::map<R, std::vector<float> Layer::*> layerVectors{{R::QNorm, &Layer::qNorm},
                                                                       {R::KNorm, &Layer::kNorm},
                                                                       {R::InputNorm, &Layer::inputNorm},
                                                                       {R::PostNorm, &Layer::postNorm}};
    static const std::map<R, Source DraftForward::*> topLinears{{R::Fc, &DraftForward::m_fc},
                                                                {R::Embedding, &DraftForward::m_embed},
                                                                {R::Head, &DraftForward::m_head},
                                                                {R::MarkovW1, &DraftForward::m_markovW1},
                                                                {R::MarkovW2, &DraftForward::m_markovW2}};
    // EAGLE-3 keeps its one hidden_norm inside the layer; the graph uses it as the others' top-level one.
    static const std::map<R, std::vector<float> DraftForward::*> topVectors{
        {R::HiddenNorm, &DraftForward::m_hiddenNorm},
        {R::LayerHiddenNorm, &DraftForward::m_hiddenNorm},
        {R::Norm, &DraftForward::m_norm},
        {R::ConfidenceWeight, &DraftForward::m_confidence}};

    const auto& s = m_spec;
    auto& layer = m_layers[static_cast<std::size_t>(std::max<std::int64_t>(tensor.index, 0))];
    if (const auto it = layerLinears.find(tensor.role); it != layerLinears.end()) {
        layer.*(it->second) = bindLinear(tensor);
    } else if (const auto iv = layerVectors.find(tensor.role); iv != layerVectors.end()) {
        layer.*(iv->second) = bindVector(tensor);
    } else if (const auto tl = topLinears.find(tensor.role); tl != topLinears.end()) {
        this->*(tl->second) = bindLinear(tensor);
    } else if (const auto tv = topVectors.find(tensor.role); tv != topVectors.end()) {
        this->*(tv->second) = bindVector(tensor);
    } else if (tensor.role == R::Qkv) { // one matrix on disk, three sources that observe their own rows
        const auto qkv = bindLinear(tensor);
        const std::int64_t q = s.heads * s.headDim, kv = s.kvHeads * s.headDim;
        layer.q = bindRows(qkv, tensor.module(), 0, q);
        layer.k = bindRows(qkv, tensor.module(), q, kv);
        layer.v = bindRows(qkv, tensor.module(), q + kv, kv);
    } else if (tensor.role == R::GateUp) {
        const auto gateUp = bindLinear(tensor);
        layer.gate = bindRows(gateUp, tensor.module(), 0, s.intermediate);
        layer.up = bindRows(gateUp, tensor.module(), s.intermediate, s.intermediate);
    } else if (tensor.role == R::AuxNorm) {
        m_auxNorms.push_back(bindVector(tensor));
    } else if (tensor.role == R::ConfidenceBias) {
        m_confidenceBias = bindVector(tensor).at(0);
    } else if (tensor.role == R::DraftToTarget) {
        m_d2t = m_weights.integers(tensor.name);
        if (static_cast<std::int64_t>(m_d2t.size()) != s.draftVocab) {
            throw ForwardInputError(m_weights.draft().folder().string(), tensor.name,
                                    "has " + std::to_string(m_d2t.size()) + " entries, draft_vocab_size is " +
                                        std::to_string(s.draftVocab));
        }
    } // t2d is left alone, as vLLM's EAGLE-3 loader does: proposals map through d2t
}

DraftForward::~DraftForward() = default;
DraftForward::DraftForward(DraftForward&&) noexcept = default;

std::int64_t DraftForward::auxWidth() const
{
    return static_cast<std::int64_t>(m_spec.auxLayerIds.size()) * m_spec.targetHidden;
}

Activations DraftForward::embed(const std::vector<std::int64_t>& ids) const
{
    Activations x(static_cast<std::int64_t>(ids.size()), m_spec.hidden);
    parallelFor(ids.size(), 64, m_threads, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
            m_embed->decodeRow(ids[i], x.row(static_cast<std::int64_t>(i)));
        }
    });
    return x;
}

std::int64_t DraftForward::targetId(std::int64_t draftId) const
{
    return m_d2t.empty() ? draftId : draftId + m_d2t[static_cast<std::size_t>(draftId)];
}

SequenceContext DraftForward::buildContext(const Activations& aux, const std::vector<std::int64_t>& tokens,
                                           std::int64_t length) const
{
    const auto& s = m_spec;
    SequenceContext ctx;
    ctx.length = length;
    Activations features(length, auxWidth());
    std::copy_n(aux.values.data(), length * auxWidth(), features.values.data());
    stored(features); // an FP32 capture's features reach vLLM's draft as BF16
    if (s.auxNorms) { // Laguna: each captured slice through its own RMSNorm before fc
        for (std::size_t slice = 0; slice < m_auxNorms.size(); ++slice) {
            Activations part =
                features.columns(static_cast<std::int64_t>(slice) * s.targetHidden, s.targetHidden);
            norm(part, m_auxNorms[slice]);
            for (std::int64_t r = 0; r < length; ++r) {
                std::copy_n(part.row(r), s.targetHidden, features.row(r) + slice * s.targetHidden);
            }
        }
    }
    Activations hidden = apply(*m_fc, features);
    std::vector<std::int64_t> positions(static_cast<std::size_t>(length));
    for (std::int64_t t = 0; t < length; ++t) {
        positions[t] = t;
    }
    if (s.chain) {
        // Step 0 at every context position t: u_t = [norm_in(embed(x_{t+1})), hidden_norm(fc(f_t))].
        std::vector<std::int64_t> next(tokens.begin() + 1, tokens.begin() + 1 + length);
        const auto& layer = m_layers.front();
        ctx.chainInputs = concatColumns(normed(embed(next), layer.inputNorm), normed(hidden, m_hiddenNorm));
        ctx.chainHidden = std::move(hidden);
        Activations k = apply(*layer.k, ctx.chainInputs);
        rope(k, positions, s.layerAttention.front().rope);
        ctx.keys.push_back(std::move(k));
        ctx.values.push_back(apply(*layer.v, ctx.chainInputs));
        return ctx;
    }
    // DFlash/DSpark: K/V of every layer from hidden_norm(fc(aux)), no attention among context tokens.
    norm(hidden, m_hiddenNorm);
    for (std::size_t l = 0; l < m_layers.size(); ++l) {
        const auto& layer = m_layers[l];
        const Activations input = s.contextInputNorm ? normed(hidden, layer.inputNorm) : hidden;
        Activations k = apply(*layer.k, input);
        if (s.qkNorm) {
            norm(k, layer.kNorm, s.headDim);
        }
        rope(k, positions, s.layerAttention[l].rope);
        ctx.keys.push_back(std::move(k));
        ctx.values.push_back(apply(*layer.v, input));
    }
    return ctx;
}

Proposals DraftForward::propose(const SequenceContext& context, const std::vector<std::int64_t>& tokens,
                                const std::vector<std::int64_t>& anchors, int k, bool keepLogits,
                                ProposalFeed feed) const
{
    for (const auto a : anchors) {
        if (a < 1 || a > context.length) {
            throw std::invalid_argument("anchor " + std::to_string(a) + " outside the context [1, " +
                                        std::to_string(context.length) + "]");
        }
    }
    if (feed == ProposalFeed::CapturedTokens) {
        for (const auto a : anchors) {
            if (a + k - 1 >= static_cast<std::int64_t>(tokens.size())) {
                throw std::invalid_argument("anchor " + std::to_string(a) +
                                            ": no captured token to feed at " + std::to_string(a + k - 1));
            }
        }
    }
    return m_spec.chain ? proposeChain(context, tokens, anchors, k, keepLogits, feed)
                        : proposeBlock(context, tokens, anchors, k, keepLogits, feed);
}

Proposals DraftForward::proposeBlock(const SequenceContext& context, const std::vector<std::int64_t>& tokens,
                                     const std::vector<std::int64_t>& anchors, int k, bool keepLogits,
                                     ProposalFeed feed) const
{
    const auto& s = m_spec;
    const auto anchorCount = static_cast<std::int64_t>(anchors.size());
    const std::int64_t q = s.queryRows(k);
    std::vector<std::int64_t> ids, positions;
    for (const auto a : anchors) {
        for (std::int64_t j = 0; j < q; ++j) {
            ids.push_back(j == 0 ? tokens[a] : s.maskTokenId);
            positions.push_back(a + j);
        }
    }
    Activations x = embed(ids);
    for (std::size_t l = 0; l < m_layers.size(); ++l) {
        const auto& layer = m_layers[l];
        const Activations h = normed(x, layer.inputNorm);
        Activations qs = apply(*layer.q, h);
        Activations ks = apply(*layer.k, h);
        const Activations vs = apply(*layer.v, h);
        if (s.qkNorm) {
            norm(qs, layer.qNorm, s.headDim);
            norm(ks, layer.kNorm, s.headDim);
        }
        const auto& attention = s.layerAttention[l];
        rope(qs, positions, attention.rope);
        rope(ks, positions, attention.rope);
        std::vector<RowKeys> visible(static_cast<std::size_t>(x.rows));
        for (std::int64_t row = 0; row < x.rows; ++row) {
            const std::int64_t anchor = anchors[row / q];
            const std::int64_t j = row % q;
            const std::int64_t first =
                attention.window > 0 ? std::max<std::int64_t>(0, anchor - attention.window) : 0;
            const std::int64_t blockStart = row - j;
            visible[row] = {{&context.keys[l], &context.values[l], first, anchor},
                            {&ks, &vs, blockStart, blockStart + (s.blockCausal ? j + 1 : q)}};
        }
        Activations attn(x.rows, s.heads * s.headDim);
        attend(qs, visible, s.heads, s.kvHeads, s.headDim, attn, m_threads);
        stored(attn);
        if (layer.g) {
            softplusGate(attn, apply(*layer.g, h), s.headDim);
            stored(attn);
        }
        residual(x, apply(*layer.o, attn));
        const Activations h2 = normed(x, layer.postNorm);
        residual(x, apply(*layer.down, swiglu(apply(*layer.gate, h2), apply(*layer.up, h2))));
    }
    norm(x, m_norm);
    // DFlash predicts at the mask rows 1..k; DSpark's every row predicts the next token.
    std::vector<std::int64_t> predicting;
    for (std::int64_t i = 0; i < anchorCount; ++i) {
        for (int j = 0; j < k; ++j) {
            predicting.push_back(i * q + (s.sampleFromAnchor ? j : j + 1));
        }
    }
    const Activations hidden = x.gather(predicting);
    Activations logits = apply(*m_head, hidden);
    if (s.logitScale != 1.0) {
        for (auto& v : logits.values) {
            v *= static_cast<float>(s.logitScale);
        }
        stored(logits);
    }
    Proposals out;
    out.anchors = anchorCount;
    out.k = k;
    out.tokens.assign(static_cast<std::size_t>(anchorCount * k), 0);
    if (m_markovW1) {
        // Vanilla Markov head, sequential over positions: logits_j += scale · W2 · W1[prev_j], prev_0 =
        // anchor, prev_j the proposal of step j − 1 (or the captured token at anchor + j).
        std::vector<std::int64_t> previous;
        for (const auto a : anchors) {
            previous.push_back(tokens[a]);
        }
        if (!m_confidence.empty()) {
            out.confidence.assign(out.tokens.size(), 0.0f);
        }
        for (int j = 0; j < k; ++j) {
            Activations m(anchorCount, s.markovRank);
            for (std::int64_t i = 0; i < anchorCount; ++i) {
                m_markovW1->decodeRow(previous[i], m.row(i));
            }
            const Activations term = apply(*m_markovW2, m);
            for (std::int64_t i = 0; i < anchorCount; ++i) {
                float* row = logits.row(i * k + j);
                for (std::int64_t c = 0; c < logits.cols; ++c) {
                    row[c] += static_cast<float>(s.logitScale) * term.row(i)[c];
                }
                stored(row, logits.cols);
                const std::int64_t token = targetId(argmaxRow(row, logits.cols));
                out.tokens[i * k + j] = token;
                if (j + 1 < k) {
                    previous[i] = feed == ProposalFeed::CapturedTokens ? tokens[anchors[i] + j + 1] : token;
                }
                if (!m_confidence.empty()) {
                    double z = m_confidenceBias;
                    for (std::int64_t c = 0; c < s.hidden; ++c) {
                        z += static_cast<double>(m_confidence[c]) * hidden.row(i * k + j)[c];
                    }
                    for (std::int64_t c = 0; c < s.markovRank; ++c) {
                        z += static_cast<double>(m_confidence[s.hidden + c]) * m.row(i)[c];
                    }
                    out.confidence[i * k + j] = static_cast<float>(1.0 / (1.0 + std::exp(-z)));
                }
            }
        }
    } else {
        for (std::int64_t r = 0; r < logits.rows; ++r) {
            out.tokens[r] = targetId(argmaxRow(logits.row(r), logits.cols));
        }
    }
    if (keepLogits) {
        out.logits = std::move(logits);
    }
    return out;
}

Proposals DraftForward::proposeChain(const SequenceContext& context, const std::vector<std::int64_t>& tokens,
                                     const std::vector<std::int64_t>& anchors, int k, bool keepLogits,
                                     ProposalFeed feed) const
{
    const auto& s = m_spec;
    const auto& layer = m_layers.front();
    const auto anchorCount = static_cast<std::int64_t>(anchors.size());
    const std::int64_t kvWidth = s.kvHeads * s.headDim;
    std::vector<std::int64_t> rows;
    for (const auto a : anchors) {
        rows.push_back(a - 1); // step 0 runs at the last verified position p = anchor − 1
    }
    Activations u = context.chainInputs.gather(rows);
    Activations g = context.chainHidden.gather(rows);
    Activations ownKeys(anchorCount * k, kvWidth), ownValues(anchorCount * k, kvWidth);
    Proposals out;
    out.anchors = anchorCount;
    out.k = k;
    out.tokens.assign(static_cast<std::size_t>(anchorCount * k), 0);
    if (keepLogits) {
        out.logits = Activations(anchorCount * k, s.draftVocab);
    }
    std::vector<std::int64_t> positions(rows);
    for (int step = 0; step < k; ++step) {
        if (step > 0) {
            std::vector<std::int64_t> previous;
            for (std::int64_t i = 0; i < anchorCount; ++i) {
                previous.push_back(feed == ProposalFeed::CapturedTokens ? tokens[anchors[i] + step]
                                                                        : out.token(i, step - 1));
                positions[i] = rows[i] + step;
            }
            u = concatColumns(normed(embed(previous), layer.inputNorm), normed(g, m_hiddenNorm));
        }
        const auto& rope = s.layerAttention.front().rope;
        Activations qs = apply(*layer.q, u);
        this->rope(qs, positions, rope);
        if (step > 0) { // the step's own K/V join the anchor's private cache
            Activations ks = apply(*layer.k, u);
            this->rope(ks, positions, rope);
            const Activations vs = apply(*layer.v, u);
            for (std::int64_t i = 0; i < anchorCount; ++i) {
                std::copy_n(ks.row(i), kvWidth, ownKeys.row(i * k + step));
                std::copy_n(vs.row(i), kvWidth, ownValues.row(i * k + step));
            }
        }
        std::vector<RowKeys> visible(static_cast<std::size_t>(anchorCount));
        for (std::int64_t i = 0; i < anchorCount; ++i) {
            visible[i] = {{&context.keys[0], &context.values[0], 0, rows[i] + 1},
                          {&ownKeys, &ownValues, i * k + 1, i * k + step + 1}};
        }
        Activations attn(anchorCount, s.heads * s.headDim);
        attend(qs, visible, s.heads, s.kvHeads, s.headDim, attn, m_threads);
        stored(attn);
        Activations y = s.normBeforeResidual ? normed(g, m_hiddenNorm) : g;
        residual(y, apply(*layer.o, attn));
        const Activations h2 = normed(y, layer.postNorm);
        residual(y, apply(*layer.down, swiglu(apply(*layer.gate, h2), apply(*layer.up, h2))));
        const Activations logits = apply(*m_head, normed(y, m_norm));
        for (std::int64_t i = 0; i < anchorCount; ++i) {
            out.tokens[i * k + step] = targetId(argmaxRow(logits.row(i), logits.cols));
            if (keepLogits) {
                std::copy_n(logits.row(i), logits.cols, out.logits.row(i * k + step));
            }
        }
        g = std::move(y); // the pre-norm hidden state carries to the next step
    }
    return out;
}

} // namespace spark
