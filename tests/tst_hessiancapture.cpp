// GPTQ's input Hessians from the reference forward on demo drafts and their synthetic captures: every
// Linear the forward applies gets XᵀX of exactly the inputs it saw, k/v of block drafts see the context path
// too, a fused qkv_proj gets one Hessian per row range, the memory budget splits the work into passes
// without changing a number, and observing changes no proposal.
#include "core/forward/acceptance.h"
#include "core/forward/acceptancejob.h"
#include "core/forward/hessiancapture.h"
#include "core/io/ioerror.h"
#include "democapturehelpers.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>

using namespace spark;
namespace fs = std::filesystem;

namespace {

using Demo = test::DemoWithCapture;

AcceptanceJob jobOf(const Demo& d)
{
    AcceptanceJob job;
    job.draft = d.draft;
    job.capture = d.capture;
    job.target = d.target;
    job.options.k = 2;
    job.options.threads = 2;
    return job;
}

/// Keeps every input of one row range of one module, to recompute its XᵀX independently.
class Recorder : public LinearInputObserver
{
  public:
    explicit Recorder(std::string module, std::int64_t firstRow = 0)
        : m_module(std::move(module)), m_row(firstRow)
    {
    }
    void observe(const std::string& module, std::int64_t firstRow, std::int64_t,
                 const Activations& input) override
    {
        if (module == m_module && firstRow == m_row) {
            inputs.push_back(input);
        }
    }
    std::vector<Activations> inputs;

  private:
    std::string m_module;
    std::int64_t m_row;
};

/// Σ x xᵀ by the definition, FP64.
std::vector<double> naiveXtx(const std::vector<Activations>& inputs, std::int64_t& tokens)
{
    const std::int64_t cols = inputs.front().cols;
    std::vector<double> h(static_cast<std::size_t>(cols * cols), 0.0);
    tokens = 0;
    for (const auto& x : inputs) {
        tokens += x.rows;
        for (std::int64_t t = 0; t < x.rows; ++t) {
            const float* r = x.row(t);
            for (std::int64_t i = 0; i < cols; ++i) {
                for (std::int64_t j = 0; j < cols; ++j) {
                    h[static_cast<std::size_t>(i * cols + j)] += double(r[i]) * double(r[j]);
                }
            }
        }
    }
    return h;
}

/// Equal up to FP64 summation order.
void compareXtx(const HessianSlice& slice, const std::vector<double>& expected)
{
    QCOMPARE(slice.xtx.size(), expected.size());
    double scale = 0;
    for (const auto v : expected) {
        scale = std::max(scale, std::abs(v));
    }
    QVERIFY(scale > 0);
    for (std::size_t i = 0; i < expected.size(); ++i) {
        QVERIFY2(std::abs(slice.xtx[i] - expected[i]) <= 1e-12 * scale, std::to_string(i).c_str());
    }
}

/// Positive semidefinite up to rounding on the leading @p limit columns: Cholesky of that principal block
/// succeeds once a tiny multiple of its largest diagonal is added (H may be singular: fewer tokens than
/// columns). Every principal block of a sum of outer products is one; the bound keeps the O(n³) check
/// short in the emulated aarch64 runs, where fc has up to 1536 columns.
bool positiveSemidefinite(const HessianSlice& h, std::size_t limit = 256)
{
    const auto stride = static_cast<std::size_t>(h.cols);
    const auto n = std::min(stride, limit);
    std::vector<double> a(n * n);
    for (std::size_t i = 0; i < n; ++i) {
        std::copy_n(h.xtx.begin() + static_cast<std::ptrdiff_t>(i * stride), n,
                    a.begin() + static_cast<std::ptrdiff_t>(i * n));
    }
    double maxDiag = 0;
    for (std::size_t i = 0; i < n; ++i) {
        maxDiag = std::max(maxDiag, a[i * n + i]);
    }
    for (std::size_t i = 0; i < n; ++i) {
        a[i * n + i] += 1e-9 * maxDiag + 1e-300;
    }
    for (std::size_t j = 0; j < n; ++j) {
        double d = a[j * n + j];
        for (std::size_t p = 0; p < j; ++p) {
            d -= a[j * n + p] * a[j * n + p];
        }
        if (!(d > 0)) {
            return false;
        }
        const double l = std::sqrt(d);
        a[j * n + j] = l;
        for (std::size_t i = j + 1; i < n; ++i) {
            double v = a[i * n + j];
            for (std::size_t p = 0; p < j; ++p) {
                v -= a[i * n + p] * a[j * n + p];
            }
            a[i * n + j] = v / l;
        }
    }
    return true;
}

/// Every 2-D weight of the draft but the embedding, and lm_head (shipped by the target for some drafts).
std::vector<std::string> weightModules(const Checkpoint& draft)
{
    std::vector<std::string> names;
    for (const auto& t : draft.tensors()) {
        if (t.info.shape.size() == 2 && t.info.name.ends_with(".weight") &&
            t.info.name != "embed_tokens.weight") {
            names.push_back(t.info.name.substr(0, t.info.name.size() - 7));
        }
    }
    if (std::find(names.begin(), names.end(), "lm_head") == names.end()) {
        names.push_back("lm_head");
    }
    return names;
}

/// The context lengths evaluateAnchors builds: per sample, the last anchor.
std::int64_t contextRows(const std::vector<Anchor>& anchors)
{
    std::map<std::int64_t, std::int64_t> last;
    for (const auto& a : anchors) {
        last[a.sample] = std::max(last[a.sample], a.position);
    }
    std::int64_t rows = 0;
    for (const auto& [sample, length] : last) {
        rows += length;
    }
    return rows;
}

} // namespace

class TestHessianCapture : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void initTestCase();
    void everyAppliedLinearGetsAValidHessian_data();
    void everyAppliedLinearGetsAValidHessian();
    void fcHessianIsTheCapturedFeatures_data();
    void fcHessianIsTheCapturedFeatures();
    void qProjHessianIsExactlyTheInputsSeen();
    void tokenCountsFollowTheArchitecture();
    void fusedQkvGetsOneSlicePerRowRange();
    void memorySplitChangesNoNumber();
    void moduleLargerThanTheBudgetIsNamed();
    void samplesAnchorsAndCancel();
    void observingChangesNoProposal();

  private:
    QTemporaryDir m_dir;
    std::map<std::string, Demo> m_demos;
};

void TestHessianCapture::initTestCase()
{
    QVERIFY(m_dir.isValid());
    for (const auto& arch : demoArchitectures()) {
        m_demos[arch] = test::writeDemoWithCapture(m_dir.path().toStdString(), arch, 2, 2, 32, 6);
    }
}

void TestHessianCapture::everyAppliedLinearGetsAValidHessian_data()
{
    QTest::addColumn<QString>("arch");
    for (const auto& arch : demoArchitectures()) {
        QTest::addRow("%s", arch.c_str()) << QString::fromStdString(arch);
    }
}

void TestHessianCapture::everyAppliedLinearGetsAValidHessian()
{
    QFETCH(QString, arch);
    const auto& demo = m_demos.at(arch.toStdString());
    const auto capture = HiddenStateCapture::open(demo.capture);
    auto drafts = openAcceptanceDrafts(jobOf(demo), capture);
    const auto modules = weightModules(*drafts.draft);
    const auto result = captureHessians(*drafts.base, capture, modules, {.k = 2, .threads = 2});
    QCOMPARE(result.samples, std::int64_t{2});
    QCOMPARE(result.passes, std::int64_t{1});
    QVERIFY(result.anchors > 0);

    // Every quantizable Linear is applied (a missing one would leave GPTQ without inputs). DSpark's Markov
    // w1 is a gather and its confidence head an FP64 dot product, neither a Linear input.
    const auto& spec = drafts.base->spec();
    for (const auto& name : modules) {
        const bool applied = name != "markov_head.markov_w1" && name != "confidence_head.proj";
        QVERIFY2(result.modules.contains(name) == applied, name.c_str());
    }
    for (const auto& [name, slices] : result.modules) {
        const auto weight = drafts.base->weights().linear(name);
        QCOMPARE(slices.size(), std::size_t{spec.fusedQkv && name.ends_with("qkv_proj") ? 3u : 1u});
        std::int64_t rows = 0;
        for (const auto& slice : slices) {
            QCOMPARE(slice.firstRow, rows); // the slices tile the weight's rows
            rows += slice.rowCount;
            QVERIFY2(slice.tokens > 0, name.c_str());
            QCOMPARE(slice.cols, weight->cols());
            QCOMPARE(slice.xtx.size(), static_cast<std::size_t>(slice.cols * slice.cols));
            std::int64_t negativeDiagonal = 0, asymmetric = 0;
            for (std::int64_t i = 0; i < slice.cols; ++i) {
                negativeDiagonal += !(slice.xtx[static_cast<std::size_t>(i * slice.cols + i)] >= 0);
                for (std::int64_t j = 0; j < i; ++j) {
                    asymmetric += slice.xtx[static_cast<std::size_t>(i * slice.cols + j)] !=
                                  slice.xtx[static_cast<std::size_t>(j * slice.cols + i)];
                }
            }
            QCOMPARE(negativeDiagonal, std::int64_t{0});
            QCOMPARE(asymmetric, std::int64_t{0});
            // A sum of outer products.
            QVERIFY2(positiveSemidefinite(slice), name.c_str());
        }
        QCOMPARE(rows, weight->rows());
    }
}

void TestHessianCapture::fcHessianIsTheCapturedFeatures_data()
{
    QTest::addColumn<QString>("arch");
    // Neither normalizes the aux features before fc (Laguna does), so fc reads the capture as stored.
    QTest::addRow("qwen3-dflash") << QStringLiteral("qwen3-dflash");
    QTest::addRow("llama-eagle3") << QStringLiteral("llama-eagle3");
}

void TestHessianCapture::fcHessianIsTheCapturedFeatures()
{
    QFETCH(QString, arch);
    const auto& demo = m_demos.at(arch.toStdString());
    const auto capture = HiddenStateCapture::open(demo.capture);
    auto drafts = openAcceptanceDrafts(jobOf(demo), capture);
    QVERIFY(!drafts.base->spec().auxNorms);
    const auto result = captureHessians(*drafts.base, capture, {"fc"}, {.k = 2, .threads = 2});

    // fc runs once per sequence, on the context up to its last anchor.
    const auto slots = matchCapture(capture, drafts.base->spec(), true);
    const auto anchors = eligibleAnchors(capture, 2);
    std::map<std::int64_t, std::int64_t> last;
    for (const auto& a : anchors) {
        last[a.sample] = std::max(last[a.sample], a.position);
    }
    std::vector<Activations> features;
    for (const auto& [sample, length] : last) {
        features.push_back(capture.hidden(sample, slots, length));
    }
    std::int64_t tokens = 0;
    const auto expected = naiveXtx(features, tokens);
    const auto& slice = result.modules.at("fc").front();
    QCOMPARE(slice.tokens, tokens);
    compareXtx(slice, expected);
}

void TestHessianCapture::qProjHessianIsExactlyTheInputsSeen()
{
    const auto& demo = m_demos.at("qwen3-dflash");
    const auto capture = HiddenStateCapture::open(demo.capture);
    auto drafts = openAcceptanceDrafts(jobOf(demo), capture);
    const auto layer = drafts.base->spec().layerName(1);
    const std::string q = layer + ".self_attn.q_proj", k = layer + ".self_attn.k_proj";
    const auto result = captureHessians(*drafts.base, capture, {q, k}, {.k = 2, .threads = 2});

    for (const auto& module : {q, k}) {
        Recorder recorder(module);
        drafts.base->setInputObserver(&recorder);
        evaluateAnchors(*drafts.base, nullptr, capture, eligibleAnchors(capture, 2),
                        drafts.options({.k = 2}));
        drafts.base->setInputObserver(nullptr);
        std::int64_t tokens = 0;
        const auto expected = naiveXtx(recorder.inputs, tokens);
        QCOMPARE(result.modules.at(module).front().tokens, tokens);
        compareXtx(result.modules.at(module).front(), expected);
    }
}

void TestHessianCapture::tokenCountsFollowTheArchitecture()
{
    for (const char* arch : {"qwen3-dflash", "glm-dspark", "llama-eagle3"}) {
        const auto& demo = m_demos.at(arch);
        const auto capture = HiddenStateCapture::open(demo.capture);
        auto drafts = openAcceptanceDrafts(jobOf(demo), capture);
        const auto& spec = drafts.base->spec();
        const auto attn = spec.layerName(0) + ".self_attn.";
        const auto mlp = spec.layerName(0) + ".mlp.";
        const auto result = captureHessians(*drafts.base, capture,
                                            {attn + "q_proj", attn + "k_proj", attn + "v_proj",
                                             attn + "o_proj", mlp + "gate_proj", mlp + "up_proj", "fc"},
                                            {.k = 2, .threads = 2});
        const auto tokensOf = [&](const std::string& m) { return result.modules.at(m).front().tokens; };
        const auto& qH = result.modules.at(attn + "q_proj").front();
        const auto& kH = result.modules.at(attn + "k_proj").front();
        const auto& vH = result.modules.at(attn + "v_proj").front();
        const std::int64_t anchors = result.anchors;
        const std::int64_t context = contextRows(eligibleAnchors(capture, 2));
        QCOMPARE(tokensOf("fc"), context);
        if (spec.chain) {
            // EAGLE-3: q runs at each of the k chained steps; k/v at step 0 of every context position
            // (buildContext) and at the steps ≥ 1 (step 0's own K/V is the context's).
            QCOMPARE(qH.tokens, anchors * 2);
            QCOMPARE(kH.tokens, context + anchors * (2 - 1));
        } else {
            // DFlash/DSpark: q sees the query block only; k/v the block and the context path.
            QCOMPARE(qH.tokens, anchors * spec.queryRows(2));
            QCOMPARE(kH.tokens, qH.tokens + context);
        }
        QVERIFY(kH.tokens > qH.tokens);
        // k and v read the same inputs: the same Hessian, to the bit.
        QVERIFY(kH.xtx == vH.xtx);
        QCOMPARE(tokensOf(attn + "o_proj"), qH.tokens);
        QVERIFY(result.modules.at(mlp + "gate_proj").front().xtx ==
                result.modules.at(mlp + "up_proj").front().xtx);
    }
}

void TestHessianCapture::fusedQkvGetsOneSlicePerRowRange()
{
    const auto& demo = m_demos.at("laguna-dflash");
    const auto capture = HiddenStateCapture::open(demo.capture);
    auto drafts = openAcceptanceDrafts(jobOf(demo), capture);
    const auto& spec = drafts.base->spec();
    QVERIFY(spec.fusedQkv);
    const std::string qkv = spec.layerName(2) + ".self_attn.qkv_proj";
    const auto result = captureHessians(*drafts.base, capture, {qkv}, {.k = 2, .threads = 2});
    const auto& slices = result.modules.at(qkv);
    QCOMPARE(slices.size(), std::size_t{3});
    const std::int64_t qRows = spec.heads * spec.headDim;
    const std::int64_t kvRows = spec.kvHeads * spec.headDim;
    QCOMPARE(slices[0].firstRow, std::int64_t{0});
    QCOMPARE(slices[0].rowCount, qRows);
    QCOMPARE(slices[1].firstRow, qRows);
    QCOMPARE(slices[1].rowCount, kvRows);
    QCOMPARE(slices[2].firstRow, qRows + kvRows);
    QCOMPARE(slices[2].rowCount, kvRows);
    QCOMPARE(slices[1].tokens, slices[0].tokens + contextRows(eligibleAnchors(capture, 2)));
    QVERIFY(slices[1].xtx == slices[2].xtx);

    // k and v share one accumulator until q's stream parts from theirs: each slice is still exactly its own
    // inputs.
    for (const auto& slice : slices) {
        Recorder recorder(qkv, slice.firstRow);
        drafts.base->setInputObserver(&recorder);
        evaluateAnchors(*drafts.base, nullptr, capture, eligibleAnchors(capture, 2),
                        drafts.options({.k = 2}));
        drafts.base->setInputObserver(nullptr);
        std::int64_t tokens = 0;
        const auto expected = naiveXtx(recorder.inputs, tokens);
        QCOMPARE(slice.tokens, tokens);
        compareXtx(slice, expected);
    }
}

void TestHessianCapture::memorySplitChangesNoNumber()
{
    const auto& demo = m_demos.at("laguna-dflash");
    const auto capture = HiddenStateCapture::open(demo.capture);
    auto drafts = openAcceptanceDrafts(jobOf(demo), capture);
    const auto modules = weightModules(*drafts.draft);
    const auto whole = captureHessians(*drafts.base, capture, modules, {.k = 2, .threads = 2});
    QCOMPARE(whole.passes, std::int64_t{1});

    // The largest module alone: every other one needs a pass of its own or a few share one.
    std::uint64_t largest = 0;
    for (const auto& [name, slices] : whole.modules) {
        std::uint64_t bytes = 0;
        for (const auto& s : slices) {
            bytes += s.xtx.size() * sizeof(double);
        }
        largest = std::max(largest, bytes);
    }
    // One thread here: the sums do not depend on the thread count either.
    const auto split =
        captureHessians(*drafts.base, capture, modules, {.k = 2, .memoryBytes = largest, .threads = 1});
    QVERIFY(split.passes >= 2);
    QCOMPARE(split.anchors, whole.anchors);
    QCOMPARE(split.modules.size(), whole.modules.size());
    for (const auto& [name, slices] : whole.modules) {
        const auto& other = split.modules.at(name);
        QCOMPARE(other.size(), slices.size());
        for (std::size_t i = 0; i < slices.size(); ++i) {
            QCOMPARE(other[i].tokens, slices[i].tokens);
            QVERIFY2(other[i].xtx == slices[i].xtx, name.c_str());
        }
    }
}

void TestHessianCapture::moduleLargerThanTheBudgetIsNamed()
{
    const auto& demo = m_demos.at("qwen3-dflash");
    const auto capture = HiddenStateCapture::open(demo.capture);
    auto drafts = openAcceptanceDrafts(jobOf(demo), capture);
    const std::string q = drafts.base->spec().layerName(0) + ".self_attn.q_proj";
    const std::string down = drafts.base->spec().layerName(0) + ".mlp.down_proj"; // 2× q's input width
    const auto cols = static_cast<std::uint64_t>(drafts.base->weights().linear(down)->cols());
    try {
        captureHessians(*drafts.base, capture, {q, down}, {.k = 2, .memoryBytes = cols * cols * 8 - 1});
        QFAIL("no error");
    } catch (const std::invalid_argument& e) {
        QVERIFY2(std::string(e.what()).starts_with(down + ":"), e.what());
    }
}

void TestHessianCapture::samplesAnchorsAndCancel()
{
    const auto& demo = m_demos.at("llama-eagle3");
    const auto capture = HiddenStateCapture::open(demo.capture);
    auto drafts = openAcceptanceDrafts(jobOf(demo), capture);
    const auto all = captureHessians(*drafts.base, capture, {"fc"}, {.k = 2, .threads = 2});
    const auto one = captureHessians(*drafts.base, capture, {"fc"}, {.samples = 1, .k = 2, .threads = 2});
    QCOMPARE(one.samples, std::int64_t{1});
    QVERIFY(one.anchors < all.anchors);
    QVERIFY(one.modules.at("fc").front().tokens < all.modules.at("fc").front().tokens);

    // One anchor per sequence, its last: the same context path, fewer query rows.
    const auto sparse = captureHessians(*drafts.base, capture, {"fc", "lm_head"},
                                        {.k = 2, .threads = 2, .anchorsPerSample = 1});
    QCOMPARE(sparse.anchors, std::int64_t{2});
    QVERIFY(sparse.modules.at("fc").front().xtx == all.modules.at("fc").front().xtx);
    QCOMPARE(sparse.modules.at("lm_head").front().tokens, std::int64_t{2 * 2});

    std::uint64_t calls = 0;
    const auto stop = [&](std::uint64_t, std::uint64_t) { return ++calls < 2; };
    try {
        captureHessians(*drafts.base, capture, {"fc"}, {.k = 2, .threads = 2, .progress = stop});
        QFAIL("not cancelled");
    } catch (const IoError& e) {
        QCOMPARE(e.kind(), IoErrorKind::Cancelled);
    }
}

void TestHessianCapture::observingChangesNoProposal()
{
    const auto& demo = m_demos.at("glm-dspark");
    const auto capture = HiddenStateCapture::open(demo.capture);
    auto drafts = openAcceptanceDrafts(jobOf(demo), capture);
    const auto anchors = eligibleAnchors(capture, 2);
    const auto options = drafts.options({.k = 2});
    const auto plain = evaluateAnchors(*drafts.base, nullptr, capture, anchors, options);
    Recorder recorder("markov_head.markov_w2");
    drafts.base->setInputObserver(&recorder);
    const auto observed = evaluateAnchors(*drafts.base, nullptr, capture, anchors, options);
    drafts.base->setInputObserver(nullptr);
    QVERIFY(!recorder.inputs.empty());
    // captureHessians leaves the draft without an observer, and its forward as it was.
    captureHessians(*drafts.base, capture, {"lm_head"}, {.k = 2, .threads = 2});
    const auto after = evaluateAnchors(*drafts.base, nullptr, capture, anchors, options);
    QCOMPARE(plain.size(), observed.size());
    QCOMPARE(plain.size(), after.size());
    for (std::size_t i = 0; i < plain.size(); ++i) {
        for (const auto* other : {&observed[i], &after[i]}) {
            QVERIFY(plain[i].base.tokens == other->base.tokens);
            QVERIFY(plain[i].base.topMargin == other->base.topMargin);
            QVERIFY(plain[i].base.confidence == other->base.confidence);
        }
    }
}

QTEST_GUILESS_MAIN(TestHessianCapture)
#include "tst_hessiancapture.moc"
