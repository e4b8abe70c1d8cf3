// The reference forward of every draft graph against a second, naive implementation written here from
// draft-forward.md (double precision, plain loops, no shared code with core/forward beyond reading weights):
// logits must agree to 1e-4 relative and the proposals exactly.
#include "core/demo/democapture.h"
#include "core/demo/demodraft.h"
#include "core/forward/draftforward.h"
#include "core/io/floatconv.h"

#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <cstring>
#include <map>

using namespace spark;

namespace {

using Vec = std::vector<double>;
using Mat = std::vector<Vec>; // rows

/// Weights of a tiny draft as doubles, read straight from the files.
class NaiveWeights
{
  public:
    NaiveWeights(const Checkpoint& draft, const Checkpoint* target) : m_draft(draft), m_target(target) {}

    Mat matrix(const std::string& name) const
    {
        const auto [ck, t] = find(name);
        const auto bytes = ck->bytes(*t);
        std::vector<float> v(t->info.numel());
        toFloat(t->info.dtype, bytes.data(), v.size(), v.data());
        const auto rows = t->info.shape[0];
        const auto cols = t->info.shape.size() > 1 ? t->info.shape[1] : 1;
        Mat m(rows, Vec(cols));
        for (std::size_t r = 0; r < rows; ++r) {
            for (std::size_t c = 0; c < cols; ++c) {
                m[r][c] = v[r * cols + c];
            }
        }
        return m;
    }
    Vec vector(const std::string& name) const
    {
        Mat m = matrix(name);
        Vec v;
        for (const auto& r : m) {
            v.insert(v.end(), r.begin(), r.end());
        }
        return v;
    }
    bool has(const std::string& name) const { return find(name).second != nullptr; }
    std::vector<std::int64_t> integers(const std::string& name) const
    {
        const auto [ck, t] = find(name);
        std::vector<std::int64_t> v(t->info.numel());
        std::memcpy(v.data(), ck->bytes(*t).data(), v.size() * 8);
        return v;
    }

  private:
    std::pair<const Checkpoint*, const CheckpointTensor*> find(const std::string& name) const
    {
        if (const auto* t = m_draft.find(name)) {
            return {&m_draft, t};
        }
        if (m_target) {
            for (const auto& n : {"model." + name, name}) {
                if (const auto* t = m_target->find(n)) {
                    return {m_target, t};
                }
            }
        }
        return {nullptr, nullptr};
    }
    const Checkpoint& m_draft;
    const Checkpoint* m_target;
};

Vec matvec(const Mat& w, const Vec& x)
{
    Vec y(w.size(), 0.0);
    for (std::size_t r = 0; r < w.size(); ++r) {
        for (std::size_t c = 0; c < x.size(); ++c) {
            y[r] += w[r][c] * x[c];
        }
    }
    return y;
}

Vec rms(const Vec& x, const Vec& w, double eps, std::size_t group = 0)
{
    const std::size_t g = group ? group : x.size();
    Vec y(x.size());
    for (std::size_t s = 0; s < x.size(); s += g) {
        double ms = 0;
        for (std::size_t i = 0; i < g; ++i) {
            ms += x[s + i] * x[s + i];
        }
        ms /= static_cast<double>(g);
        for (std::size_t i = 0; i < g; ++i) {
            y[s + i] = w[i] * x[s + i] / std::sqrt(ms + eps);
        }
    }
    return y;
}

void rope(Vec& x, double pos, std::size_t hd, double theta)
{
    for (std::size_t h = 0; h < x.size(); h += hd) {
        for (std::size_t j = 0; j < hd / 2; ++j) {
            const double f = pos * std::pow(theta, -2.0 * static_cast<double>(j) / static_cast<double>(hd));
            const double a = x[h + j], b = x[h + j + hd / 2];
            x[h + j] = a * std::cos(f) - b * std::sin(f);
            x[h + j + hd / 2] = b * std::cos(f) + a * std::sin(f);
        }
    }
}

Vec cat(const Vec& a, const Vec& b)
{
    Vec c = a;
    c.insert(c.end(), b.begin(), b.end());
    return c;
}

struct Geometry
{
    std::size_t hidden, heads, kv, hd;
    double eps, theta;
};

Geometry geometryOf(const DraftSpec& s)
{
    return {static_cast<std::size_t>(s.hidden),
            static_cast<std::size_t>(s.heads),
            static_cast<std::size_t>(s.kvHeads),
            static_cast<std::size_t>(s.headDim),
            s.eps,
            s.layerAttention.front().rope.theta};
}

/// softmax(q·k/√hd)·v over the given keys, GQA.
Vec attention(const Vec& q, const std::vector<const Vec*>& keys, const std::vector<const Vec*>& values,
              const Geometry& g)
{
    Vec out(g.heads * g.hd, 0.0);
    for (std::size_t h = 0; h < g.heads; ++h) {
        const std::size_t kvh = h / (g.heads / g.kv);
        std::vector<double> s(keys.size());
        double mx = -1e300;
        for (std::size_t i = 0; i < keys.size(); ++i) {
            double d = 0;
            for (std::size_t e = 0; e < g.hd; ++e) {
                d += q[h * g.hd + e] * (*keys[i])[kvh * g.hd + e];
            }
            s[i] = d / std::sqrt(static_cast<double>(g.hd));
            mx = std::max(mx, s[i]);
        }
        double z = 0;
        for (auto& v : s) {
            v = std::exp(v - mx);
            z += v;
        }
        for (std::size_t i = 0; i < keys.size(); ++i) {
            for (std::size_t e = 0; e < g.hd; ++e) {
                out[h * g.hd + e] += s[i] / z * (*values[i])[kvh * g.hd + e];
            }
        }
    }
    return out;
}

Vec mlp(const NaiveWeights& w, const std::string& p, const Vec& x)
{
    Mat gate, up;
    if (w.has(p + ".mlp.gate_up_proj.weight")) { // gate and up stacked by rows, as vLLM's merged layer
        const Mat all = w.matrix(p + ".mlp.gate_up_proj.weight");
        gate.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(all.size() / 2));
        up.assign(all.begin() + static_cast<std::ptrdiff_t>(all.size() / 2), all.end());
    } else {
        gate = w.matrix(p + ".mlp.gate_proj.weight");
        up = w.matrix(p + ".mlp.up_proj.weight");
    }
    const Vec g = matvec(gate, x);
    const Vec u = matvec(up, x);
    Vec a(g.size());
    for (std::size_t i = 0; i < g.size(); ++i) {
        a[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
    }
    return matvec(w.matrix(p + ".mlp.down_proj.weight"), a);
}

std::size_t argmax(const Vec& v)
{
    return static_cast<std::size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

/// q, k, v projections of a layer (Laguna's fused qkv_proj split by rows).
struct Qkv
{
    Mat q, k, v;
};
Qkv qkvOf(const NaiveWeights& w, const std::string& p, const Geometry& g)
{
    if (w.has(p + ".self_attn.qkv_proj.weight")) {
        const Mat all = w.matrix(p + ".self_attn.qkv_proj.weight");
        const std::size_t qw = g.heads * g.hd, kw = g.kv * g.hd;
        return {Mat(all.begin(), all.begin() + qw), Mat(all.begin() + qw, all.begin() + qw + kw),
                Mat(all.begin() + qw + kw, all.end())};
    }
    return {w.matrix(p + ".self_attn.q_proj.weight"), w.matrix(p + ".self_attn.k_proj.weight"),
            w.matrix(p + ".self_attn.v_proj.weight")};
}

/// DFlash / Laguna / DSpark at one anchor: logits of the k predicting rows (Markov walk included).
std::vector<Vec> naiveBlock(const NaiveWeights& w, const DraftSpec& s, const std::vector<Vec>& aux,
                            const std::vector<std::int64_t>& tokens, std::int64_t a, int k,
                            std::vector<std::int64_t>& out)
{
    const Geometry g = geometryOf(s);
    const bool laguna = s.kind == DraftArchitecture::LagunaDFlash;
    const Mat fc = w.matrix("fc.weight");
    // context
    std::vector<Vec> ctx;
    for (std::int64_t t = 0; t < a; ++t) {
        Vec f = aux[t];
        if (laguna) {
            const std::size_t ht = f.size() / s.auxLayerIds.size();
            for (std::size_t sl = 0; sl < s.auxLayerIds.size(); ++sl) {
                Vec part(f.begin() + sl * ht, f.begin() + (sl + 1) * ht);
                part = rms(part, w.vector("aux_hidden_norms." + std::to_string(sl) + ".weight"), g.eps);
                std::copy(part.begin(), part.end(), f.begin() + sl * ht);
            }
        }
        ctx.push_back(rms(matvec(fc, f), w.vector("hidden_norm.weight"), g.eps));
    }
    const std::int64_t q = s.sampleFromAnchor ? k : k + 1;
    const Mat embed = w.matrix("embed_tokens.weight");
    std::vector<Vec> x;
    for (std::int64_t j = 0; j < q; ++j) {
        x.push_back(embed[j == 0 ? tokens[a] : s.maskTokenId]);
    }
    for (std::int64_t l = 0; l < s.layers; ++l) {
        const std::string p = "layers." + std::to_string(l);
        const auto m = qkvOf(w, p, g);
        const Vec inNorm = w.vector(p + ".input_layernorm.weight");
        std::vector<Vec> ck, cv;
        for (std::int64_t t = 0; t < a; ++t) {
            const auto window = s.layerAttention[static_cast<std::size_t>(l)].window;
            if (window > 0 && t < a - window) {
                continue;
            }
            const Vec c = laguna ? rms(ctx[t], inNorm, g.eps) : ctx[t];
            Vec kk = rms(matvec(m.k, c), w.vector(p + ".self_attn.k_norm.weight"), g.eps, g.hd);
            rope(kk, static_cast<double>(t), g.hd, g.theta);
            ck.push_back(kk);
            cv.push_back(matvec(m.v, c));
        }
        std::vector<Vec> h, qs, bk, bv;
        for (std::int64_t j = 0; j < q; ++j) {
            h.push_back(rms(x[j], inNorm, g.eps));
            Vec qq = rms(matvec(m.q, h[j]), w.vector(p + ".self_attn.q_norm.weight"), g.eps, g.hd);
            Vec kk = rms(matvec(m.k, h[j]), w.vector(p + ".self_attn.k_norm.weight"), g.eps, g.hd);
            rope(qq, static_cast<double>(a + j), g.hd, g.theta);
            rope(kk, static_cast<double>(a + j), g.hd, g.theta);
            qs.push_back(qq);
            bk.push_back(kk);
            bv.push_back(matvec(m.v, h[j]));
        }
        for (std::int64_t j = 0; j < q; ++j) {
            std::vector<const Vec*> keys, values;
            for (std::size_t i = 0; i < ck.size(); ++i) {
                keys.push_back(&ck[i]);
                values.push_back(&cv[i]);
            }
            for (std::int64_t i = 0; i < (s.blockCausal ? j + 1 : q); ++i) {
                keys.push_back(&bk[i]);
                values.push_back(&bv[i]);
            }
            Vec att = attention(qs[j], keys, values, g);
            if (laguna) {
                const Vec gate = matvec(w.matrix(p + ".self_attn.g_proj.weight"), h[j]);
                for (std::size_t e = 0; e < att.size(); ++e) {
                    const double gv = gate[e / g.hd];
                    att[e] *= std::log1p(std::exp(gv));
                }
            }
            const Vec o = matvec(w.matrix(p + ".self_attn.o_proj.weight"), att);
            for (std::size_t e = 0; e < o.size(); ++e) {
                x[j][e] += o[e];
            }
        }
        for (std::int64_t j = 0; j < q; ++j) {
            const Vec d = mlp(w, p, rms(x[j], w.vector(p + ".post_attention_layernorm.weight"), g.eps));
            for (std::size_t e = 0; e < d.size(); ++e) {
                x[j][e] += d[e];
            }
        }
    }
    const Mat head = w.matrix("lm_head.weight");
    std::vector<Vec> logits;
    std::int64_t prev = tokens[a];
    for (int j = 0; j < k; ++j) {
        const Vec hn = rms(x[s.sampleFromAnchor ? j : j + 1], w.vector("norm.weight"), g.eps);
        Vec lg = matvec(head, hn);
        if (s.markovRank > 0) {
            const Vec m = w.matrix("markov_head.markov_w1.weight")[prev];
            const Vec add = matvec(w.matrix("markov_head.markov_w2.weight"), m);
            for (std::size_t e = 0; e < lg.size(); ++e) {
                lg[e] += add[e];
            }
        }
        prev = static_cast<std::int64_t>(argmax(lg));
        out.push_back(prev);
        logits.push_back(lg);
    }
    return logits;
}

/// EAGLE-3 chain at one anchor.
std::vector<Vec> naiveChain(const NaiveWeights& w, const DraftSpec& s, const std::vector<Vec>& aux,
                            const std::vector<std::int64_t>& tokens, std::int64_t a, int k,
                            std::vector<std::int64_t>& out)
{
    const Geometry g = geometryOf(s);
    const std::string p = "midlayer";
    const auto m = qkvOf(w, p, g);
    const Mat fc = w.matrix("fc.weight");
    const Mat embed = w.matrix("embed_tokens.weight");
    const Vec inNorm = w.vector(p + ".input_layernorm.weight");
    const Vec hNorm = w.vector(p + ".hidden_norm.weight");
    const auto d2t = w.integers("d2t");
    const auto uOf = [&](std::int64_t token, const Vec& hid) {
        return cat(rms(embed[token], inNorm, g.eps), rms(hid, hNorm, g.eps));
    };
    std::vector<Vec> keys, values;
    Vec hid;
    for (std::int64_t t = 0; t < a; ++t) {
        const Vec gg = matvec(fc, aux[t]);
        const Vec u = uOf(tokens[t + 1], gg);
        Vec kk = matvec(m.k, u);
        rope(kk, static_cast<double>(t), g.hd, g.theta);
        keys.push_back(kk);
        values.push_back(matvec(m.v, u));
        hid = gg;
    }
    std::vector<Vec> logits;
    Vec u = uOf(tokens[a], hid);
    for (int step = 0; step < k; ++step) {
        const double pos = static_cast<double>(a - 1 + step);
        if (step > 0) {
            u = uOf(out.back(), hid);
            Vec kk = matvec(m.k, u);
            rope(kk, pos, g.hd, g.theta);
            keys.push_back(kk);
            values.push_back(matvec(m.v, u));
        }
        Vec qq = matvec(m.q, u);
        rope(qq, pos, g.hd, g.theta);
        std::vector<const Vec*> kp, vp;
        for (std::size_t i = 0; i < keys.size(); ++i) {
            kp.push_back(&keys[i]);
            vp.push_back(&values[i]);
        }
        Vec y = s.normBeforeResidual ? rms(hid, hNorm, g.eps) : hid;
        const Vec o = matvec(w.matrix(p + ".self_attn.o_proj.weight"), attention(qq, kp, vp, g));
        for (std::size_t e = 0; e < y.size(); ++e) {
            y[e] += o[e];
        }
        const Vec d = mlp(w, p, rms(y, w.vector(p + ".post_attention_layernorm.weight"), g.eps));
        for (std::size_t e = 0; e < y.size(); ++e) {
            y[e] += d[e];
        }
        const Vec lg = matvec(w.matrix("lm_head.weight"), rms(y, w.vector("norm.weight"), g.eps));
        const auto best = argmax(lg);
        out.push_back(static_cast<std::int64_t>(best) + d2t[best]);
        logits.push_back(lg);
        hid = y;
    }
    return logits;
}

/// The draft with each layer's gate_proj and up_proj stored as one gate_up_proj.
DemoDraft withGateUpFused(DemoDraft draft)
{
    std::vector<TensorSpec> tensors;
    for (auto t : draft.tensors) {
        if (t.name.ends_with(".mlp.up_proj.weight")) {
            continue;
        }
        if (const auto at = t.name.find(".mlp.gate_proj."); at != std::string::npos) {
            t.name.replace(at, 15, ".mlp.gate_up_proj.");
            t.shape[0] *= 2;
        }
        tensors.push_back(t);
    }
    draft.tensors = std::move(tensors);
    return draft;
}

/// @p draft written under @p root (and its target beside it when it reads one), opened.
struct DemoFiles
{
    std::shared_ptr<const Checkpoint> checkpoint, target;
    DraftSpec spec;
};

DemoFiles writeDemo(const DemoDraft& draft, const std::filesystem::path& root)
{
    writeDemoDraft(draft, root / "draft", {.seed = 3, .threads = 1});
    DemoFiles out;
    if (const auto t = describeDemoTarget(draft)) {
        writeDemoDraft(*t, root / "target", {.seed = 4, .threads = 1});
        out.target = std::make_shared<const Checkpoint>(Checkpoint::open(root / "target"));
    }
    out.checkpoint = std::make_shared<const Checkpoint>(Checkpoint::open(root / "draft"));
    out.spec = readDraftSpec(*out.checkpoint);
    return out;
}

/// Counts the Linear inputs that are not BF16 values.
class Bf16InputCounter : public LinearInputObserver
{
  public:
    std::int64_t values = 0, notBf16 = 0;
    void observe(const std::string&, std::int64_t, std::int64_t, const Activations& input) override
    {
        for (const float v : input.values) {
            ++values;
            notBf16 += bf16ToFloat(floatToBf16(v)) != v ? 1 : 0;
        }
    }
};

} // namespace

class TestForward : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void matchesNaiveImplementation_data();
    void matchesNaiveImplementation();
    void bf16ActivationsReachEveryLinear_data();
    void bf16ActivationsReachEveryLinear();
    void missingTargetIsNamed();
};

void TestForward::matchesNaiveImplementation_data()
{
    QTest::addColumn<QString>("arch");
    QTest::addColumn<int>("k");
    QTest::addColumn<bool>("gateUpFused");
    for (const auto& arch : demoArchitectures()) {
        QTest::addRow("%s", arch.c_str())
            << QString::fromStdString(arch) << (arch == "glm-dspark" ? 2 : 3) << false;
    }
    QTest::addRow("qwen3-dflash, gate_up_proj on disk") << QStringLiteral("qwen3-dflash") << 3 << true;
}

void TestForward::matchesNaiveImplementation()
{
    QFETCH(QString, arch);
    QFETCH(int, k);
    QFETCH(bool, gateUpFused);
    QTemporaryDir dir;
    const std::filesystem::path root = dir.path().toStdString();
    auto draft = describeDemoDraft(arch.toStdString(), DemoScale::Tiny);
    if (gateUpFused) {
        draft = withGateUpFused(std::move(draft));
    }
    const auto [checkpoint, target, spec] = writeDemo(draft, root);
    const DraftForward forward(spec, DraftWeights(checkpoint, target), 2);

    // Random aux features and tokens; anchors near the start, the middle and the end of the context.
    const std::int64_t length = 24;
    Activations aux(length, forward.auxWidth());
    std::uint64_t state = 12345;
    for (auto& v : aux.values) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        v = static_cast<float>(static_cast<double>(state >> 40) / 16777216.0 * 4 - 2);
    }
    std::vector<std::int64_t> tokens(length + 1);
    for (auto& t : tokens) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        t = static_cast<std::int64_t>((state >> 33) % static_cast<std::uint64_t>(spec.vocab));
    }
    const std::vector<std::int64_t> anchors{1, 9, length - 1};
    const auto context = forward.buildContext(aux, tokens, length - 1);
    const auto proposals = forward.propose(context, tokens, anchors, k, true);

    const Checkpoint& draftFiles = *checkpoint;
    const NaiveWeights naive(draftFiles, target.get());
    std::vector<Vec> auxRows;
    for (std::int64_t t = 0; t < length; ++t) {
        auxRows.emplace_back(aux.row(t), aux.row(t) + aux.cols);
    }
    for (std::size_t i = 0; i < anchors.size(); ++i) {
        std::vector<std::int64_t> expectedTokens;
        const auto expected = spec.chain
                                  ? naiveChain(naive, spec, auxRows, tokens, anchors[i], k, expectedTokens)
                                  : naiveBlock(naive, spec, auxRows, tokens, anchors[i], k, expectedTokens);
        for (int j = 0; j < k; ++j) {
            const float* got = proposals.logits.row(static_cast<std::int64_t>(i) * k + j);
            double scale = 0, worst = 0;
            for (std::size_t c = 0; c < expected[j].size(); ++c) {
                scale = std::max(scale, std::abs(expected[j][c]));
                worst = std::max(worst, std::abs(expected[j][c] - got[c]));
            }
            QVERIFY2(worst <= 1e-4 * scale,
                     qPrintable(QStringLiteral("anchor %1 position %2: max |diff| %3 of %4")
                                    .arg(anchors[i])
                                    .arg(j)
                                    .arg(worst)
                                    .arg(scale)));
            QCOMPARE(proposals.token(static_cast<std::int64_t>(i), j), expectedTokens[j]);
        }
    }
}

void TestForward::bf16ActivationsReachEveryLinear_data()
{
    QTest::addColumn<QString>("arch");
    for (const auto& arch : demoArchitectures()) {
        QTest::addRow("%s", arch.c_str()) << QString::fromStdString(arch);
    }
}

// Serving numerics store every activation as BF16, so every Linear (fc over FP32 captured features
// included) sees BF16 values; the FP32 reference does not, or this test could not tell them apart.
void TestForward::bf16ActivationsReachEveryLinear()
{
    QFETCH(QString, arch);
    QTemporaryDir dir;
    const std::filesystem::path root = dir.path().toStdString();
    const auto draft = describeDemoDraft(arch.toStdString(), DemoScale::Tiny);
    const auto [checkpoint, target, spec] = writeDemo(draft, root);
    DraftForward forward(spec, DraftWeights(checkpoint, target), 2);
    const std::int64_t length = 16;
    Activations aux(length, forward.auxWidth());
    for (std::size_t i = 0; i < aux.values.size(); ++i) {
        aux.values[i] = std::sin(0.37f * static_cast<float>(i)) * 1.7f;
    }
    std::vector<std::int64_t> tokens(length + 1);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        tokens[i] = static_cast<std::int64_t>((i * 7919) % static_cast<std::size_t>(spec.vocab));
    }
    for (const auto numerics : {ForwardNumerics::Bf16Activations, ForwardNumerics::Fp32}) {
        Bf16InputCounter counter;
        forward.setNumerics(numerics);
        forward.setInputObserver(&counter);
        const auto context = forward.buildContext(aux, tokens, length);
        forward.propose(context, tokens, {1, 8, length - 1}, 2, false);
        QVERIFY(counter.values > 0);
        if (numerics == ForwardNumerics::Fp32) {
            QVERIFY(counter.notBf16 > 0);
        } else {
            QCOMPARE(counter.notBf16, std::int64_t{0});
        }
    }
    forward.setInputObserver(nullptr);
}

void TestForward::missingTargetIsNamed()
{
    QTemporaryDir dir;
    const std::filesystem::path root = dir.path().toStdString();
    writeDemoDraft(describeDemoDraft("qwen3-dflash", DemoScale::Tiny), root / "draft", {.threads = 1});
    const auto checkpoint = std::make_shared<const Checkpoint>(Checkpoint::open(root / "draft"));
    const auto spec = readDraftSpec(*checkpoint);
    try {
        DraftForward forward(spec, DraftWeights(checkpoint, nullptr), 1);
        QFAIL("a draft that shares embed_tokens with its target needs --target");
    } catch (const ForwardInputError& e) {
        QVERIFY2(std::string(e.what()).find("embed_tokens.weight") != std::string::npos, e.what());
        QVERIFY2(std::string(e.what()).find("--target") != std::string::npos, e.what());
    }
}

QTEST_GUILESS_MAIN(TestForward)
#include "tst_forward.moc"
