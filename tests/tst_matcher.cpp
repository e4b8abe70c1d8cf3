// The vLLM matcher: Python re.match semantics through QRegularExpression, class targets, fused layers.
#include "core/plan/entrypreview.h"
#include "core/plan/matchentry.h"
#include "core/plan/vllmmatching.h"

#include <QTest>
#include <string>
#include <vector>

using namespace spark;

Q_DECLARE_METATYPE(std::string)

namespace {

DraftModule module(const std::string& name, const std::string& vllmName, const std::string& vllmClass)
{
    DraftModule m;
    m.name = name;
    m.weightTensor = name + ".weight";
    m.role = ModuleRole::Linear;
    m.vllmName = vllmName;
    m.vllmShardName = vllmName;
    m.vllmClass = vllmClass;
    return m;
}

bool hasWarning(const EntryPreview& preview, const std::string& fragment)
{
    for (const auto& w : preview.warnings) {
        if (w.find(fragment) != std::string::npos) {
            return true;
        }
    }
    return false;
}

} // namespace

class TestMatcher : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void pythonReMatch_data();
    void pythonReMatch();
    void invalidRegex_data();
    void invalidRegex();
    void classTarget_data();
    void classTarget();
    void unescapedDots_data();
    void unescapedDots();
    void endAnchor_data();
    void endAnchor();
    void matchEnd();
    void fusedShardsDisagree();
    void fusedLiteralShortcut();
    void fusedTargetMatch();
    void evaluateIgnoreListReportsInvalid();
    void previewWarnings();
};

// Expectations of these rows were produced by Python 3.11's re.match (for "re:" entries) and string
// equality (for literal entries) — vLLM's _is_equal_or_regex_match — with this script, run here:
//
//   import re
//   rows = [("re:.*fc", "model.fc"), ("re:.*fc", "model.fc1"), ...]   # the (entry, name) pairs below, in
//   order def c(s): return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"' for entry, name in rows:
//       expected = re.match(entry[3:], name) is not None if entry.startswith("re:") else entry == name
//       print(f'QTest::addRow("%d: %s | %s", row++, {c(entry)}, {c(name)}) << std::string({c(entry)}) '
//             f'<< std::string({c(name)}) << {"true" if expected else "false"};')
//
// Add a row by appending its pair to `rows` and pasting the regenerated lines; never edit an expectation by
// hand.
void TestMatcher::pythonReMatch_data()
{
    QTest::addColumn<std::string>("entry");
    QTest::addColumn<std::string>("name");
    QTest::addColumn<bool>("expected");
    int row = 0;
    QTest::addRow("%d: %s | %s", row++, "re:.*fc", "model.fc")
        << std::string("re:.*fc") << std::string("model.fc") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*fc", "model.fc1")
        << std::string("re:.*fc") << std::string("model.fc1") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*fc$", "model.fc1")
        << std::string("re:.*fc$") << std::string("model.fc1") << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.fc$", "model.fc")
        << std::string("re:.*\\.fc$") << std::string("model.fc") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.fc$", "model.xfc")
        << std::string("re:.*\\.fc$") << std::string("model.xfc") << false;
    QTest::addRow("%d: %s | %s", row++, "re:fc", "model.fc")
        << std::string("re:fc") << std::string("model.fc") << false;
    QTest::addRow("%d: %s | %s", row++, "re:model", "model.fc")
        << std::string("re:model") << std::string("model.fc") << true;
    QTest::addRow("%d: %s | %s", row++, "re:layers\\.", "model.layers.0.mlp.down_proj")
        << std::string("re:layers\\.") << std::string("model.layers.0.mlp.down_proj") << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*layers\\.36\\.", "model.layers.36.self_attn.qkv_proj")
        << std::string("re:.*layers\\.36\\.") << std::string("model.layers.36.self_attn.qkv_proj") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*layers\\.3\\.", "model.layers.36.self_attn.qkv_proj")
        << std::string("re:.*layers\\.3\\.") << std::string("model.layers.36.self_attn.qkv_proj") << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*mlp.down_proj", "model.layers.0.mlpXdown_proj")
        << std::string("re:.*mlp.down_proj") << std::string("model.layers.0.mlpXdown_proj") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*mlp\\.down_proj", "model.layers.0.mlpXdown_proj")
        << std::string("re:.*mlp\\.down_proj") << std::string("model.layers.0.mlpXdown_proj") << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.(qkv|q|k|v)_proj$", "model.layers.36.self_attn.qkv_proj")
        << std::string("re:.*\\.(qkv|q|k|v)_proj$") << std::string("model.layers.36.self_attn.qkv_proj")
        << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.(qkv|q|k|v)_proj$", "model.layers.36.self_attn.q_proj")
        << std::string("re:.*\\.(qkv|q|k|v)_proj$") << std::string("model.layers.36.self_attn.q_proj")
        << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.(qkv|q|k|v)_proj$", "model.layers.36.self_attn.o_proj")
        << std::string("re:.*\\.(qkv|q|k|v)_proj$") << std::string("model.layers.36.self_attn.o_proj")
        << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.(qkv|q|k|v)_proj$", "model.layers.36.self_attn.kv_proj")
        << std::string("re:.*\\.(qkv|q|k|v)_proj$") << std::string("model.layers.36.self_attn.kv_proj")
        << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.(gate_up|gate|up)_proj$", "model.layers.0.mlp.gate_up_proj")
        << std::string("re:.*\\.(gate_up|gate|up)_proj$") << std::string("model.layers.0.mlp.gate_up_proj")
        << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.(gate_up|gate|up)_proj$", "model.layers.0.mlp.down_proj")
        << std::string("re:.*\\.(gate_up|gate|up)_proj$") << std::string("model.layers.0.mlp.down_proj")
        << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*mlp\\.(?:gate|up)_proj$", "model.layers.0.mlp.gate_up_proj")
        << std::string("re:.*mlp\\.(?:gate|up)_proj$") << std::string("model.layers.0.mlp.gate_up_proj")
        << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.[qkv]_proj$", "model.layers.0.self_attn.k_proj")
        << std::string("re:.*\\.[qkv]_proj$") << std::string("model.layers.0.self_attn.k_proj") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.[qkv]_proj$", "model.layers.0.self_attn.o_proj")
        << std::string("re:.*\\.[qkv]_proj$") << std::string("model.layers.0.self_attn.o_proj") << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.[^o]_proj$", "model.layers.0.self_attn.o_proj")
        << std::string("re:.*\\.[^o]_proj$") << std::string("model.layers.0.self_attn.o_proj") << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.[^o]_proj$", "model.layers.0.self_attn.q_proj")
        << std::string("re:.*\\.[^o]_proj$") << std::string("model.layers.0.self_attn.q_proj") << true;
    QTest::addRow("%d: %s | %s", row++, "re:(?i).*LM_HEAD$", "lm_head")
        << std::string("re:(?i).*LM_HEAD$") << std::string("lm_head") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*LM_HEAD$", "lm_head")
        << std::string("re:.*LM_HEAD$") << std::string("lm_head") << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*(?i:DOWN)_proj$", "model.layers.0.mlp.down_proj")
        << std::string("re:.*(?i:DOWN)_proj$") << std::string("model.layers.0.mlp.down_proj") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*lm_head$", "lm_head")
        << std::string("re:.*lm_head$") << std::string("lm_head") << true;
    QTest::addRow("%d: %s | %s", row++, "re:lm_head", "model.lm_head")
        << std::string("re:lm_head") << std::string("model.lm_head") << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*lm_head", "model.layers.0.lm_head_norm")
        << std::string("re:.*lm_head") << std::string("model.layers.0.lm_head_norm") << true;
    QTest::addRow("%d: %s | %s", row++, "re:(?:model\\.)?lm_head$", "lm_head")
        << std::string("re:(?:model\\.)?lm_head$") << std::string("lm_head") << true;
    QTest::addRow("%d: %s | %s", row++, "re:(?:model\\.)?lm_head$", "model.lm_head")
        << std::string("re:(?:model\\.)?lm_head$") << std::string("model.lm_head") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*(?<!self_attn)\\.o_proj$", "model.layers.0.self_attn.o_proj")
        << std::string("re:.*(?<!self_attn)\\.o_proj$") << std::string("model.layers.0.self_attn.o_proj")
        << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*(?<!self_attn)\\.o_proj$", "model.layers.0.cross_attn.o_proj")
        << std::string("re:.*(?<!self_attn)\\.o_proj$") << std::string("model.layers.0.cross_attn.o_proj")
        << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.(?!o_proj)[a-z]+_proj$", "model.layers.0.self_attn.o_proj")
        << std::string("re:.*\\.(?!o_proj)[a-z]+_proj$") << std::string("model.layers.0.self_attn.o_proj")
        << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.(?!o_proj)[a-z]+_proj$", "model.layers.0.self_attn.q_proj")
        << std::string("re:.*\\.(?!o_proj)[a-z]+_proj$") << std::string("model.layers.0.self_attn.q_proj")
        << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*(?=mlp)mlp\\.down_proj$", "model.layers.0.mlp.down_proj")
        << std::string("re:.*(?=mlp)mlp\\.down_proj$") << std::string("model.layers.0.mlp.down_proj") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.(?P<proj>q|k|v)_proj$", "model.layers.0.self_attn.v_proj")
        << std::string("re:.*\\.(?P<proj>q|k|v)_proj$") << std::string("model.layers.0.self_attn.v_proj")
        << true;
    QTest::addRow("%d: %s | %s", row++, "re:(?P<a>x)(?P=a)", "xx")
        << std::string("re:(?P<a>x)(?P=a)") << std::string("xx") << true;
    QTest::addRow("%d: %s | %s", row++, "re:(?P<a>x)(?P=a)", "xy")
        << std::string("re:(?P<a>x)(?P=a)") << std::string("xy") << false;
    QTest::addRow("%d: %s | %s", row++, "re:model\\.layers\\.\\d+\\.mlp\\.down_proj$",
                  "model.layers.36.mlp.down_proj")
        << std::string("re:model\\.layers\\.\\d+\\.mlp\\.down_proj$")
        << std::string("model.layers.36.mlp.down_proj") << true;
    QTest::addRow("%d: %s | %s", row++, "re:model\\.layers\\.\\d+\\.mlp\\.down_proj$",
                  "model.layers.x.mlp.down_proj")
        << std::string("re:model\\.layers\\.\\d+\\.mlp\\.down_proj$")
        << std::string("model.layers.x.mlp.down_proj") << false;
    QTest::addRow("%d: %s | %s", row++, "re:model\\.layers\\.[0-9]{2}\\.", "model.layers.5.mlp")
        << std::string("re:model\\.layers\\.[0-9]{2}\\.") << std::string("model.layers.5.mlp") << false;
    QTest::addRow("%d: %s | %s", row++, "re:model\\.layers\\.[0-9]{2}\\.", "model.layers.36.mlp")
        << std::string("re:model\\.layers\\.[0-9]{2}\\.") << std::string("model.layers.36.mlp") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*layers\\.(3[6-9]|4[0-9])\\.", "model.layers.41.mlp.down_proj")
        << std::string("re:.*layers\\.(3[6-9]|4[0-9])\\.") << std::string("model.layers.41.mlp.down_proj")
        << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*layers\\.(3[6-9]|4[0-9])\\.", "model.layers.35.mlp.down_proj")
        << std::string("re:.*layers\\.(3[6-9]|4[0-9])\\.") << std::string("model.layers.35.mlp.down_proj")
        << false;
    QTest::addRow("%d: %s | %s", row++, "re:^model", "model.fc")
        << std::string("re:^model") << std::string("model.fc") << true;
    QTest::addRow("%d: %s | %s", row++, "re:^fc", "model.fc")
        << std::string("re:^fc") << std::string("model.fc") << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*_head\\.", "model.markov_head.markov_w2")
        << std::string("re:.*_head\\.") << std::string("model.markov_head.markov_w2") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*_head\\.", "model.markov_head")
        << std::string("re:.*_head\\.") << std::string("model.markov_head") << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\bfc\\b", "model.fc")
        << std::string("re:.*\\bfc\\b") << std::string("model.fc") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\bfc\\b", "model.fc1")
        << std::string("re:.*\\bfc\\b") << std::string("model.fc1") << false;
    QTest::addRow("%d: %s | %s", row++, "re:", "model.fc")
        << std::string("re:") << std::string("model.fc") << true;
    QTest::addRow("%d: %s | %s", row++, "re:a|b", "bc") << std::string("re:a|b") << std::string("bc") << true;
    QTest::addRow("%d: %s | %s", row++, "re:lm_head|.*fc", "model.fc1")
        << std::string("re:lm_head|.*fc") << std::string("model.fc1") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.fc$|.*\\.lm_head$", "lm_head")
        << std::string("re:.*\\.fc$|.*\\.lm_head$") << std::string("lm_head") << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\$", "a$")
        << std::string("re:.*\\$") << std::string("a$") << true;
    QTest::addRow("%d: %s | %s", row++, "re:model\\.fc", "model.fc")
        << std::string("re:model\\.fc") << std::string("model.fc") << true;
    QTest::addRow("%d: %s | %s", row++, "re:model\\.fc", "modelxfc")
        << std::string("re:model\\.fc") << std::string("modelxfc") << false;
    QTest::addRow("%d: %s | %s", row++, "re:model.fc", "modelxfc")
        << std::string("re:model.fc") << std::string("modelxfc") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\w+_proj$", "model.layers.0.mlp.down_proj")
        << std::string("re:.*\\w+_proj$") << std::string("model.layers.0.mlp.down_proj") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\s", "model.fc")
        << std::string("re:.*\\s") << std::string("model.fc") << false;
    QTest::addRow("%d: %s | %s", row++, "re:[a-z]+\\.", "model.fc")
        << std::string("re:[a-z]+\\.") << std::string("model.fc") << true;
    QTest::addRow("%d: %s | %s", row++, "re:[A-Z]", "model.fc")
        << std::string("re:[A-Z]") << std::string("model.fc") << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*fc\\Z", "model.fc")
        << std::string("re:.*fc\\Z") << std::string("model.fc") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*fc\\Z", "model.fc1")
        << std::string("re:.*fc\\Z") << std::string("model.fc1") << false;
    QTest::addRow("%d: %s | %s", row++, "re:.*\\.(q|k|v)_proj", "model.layers.0.self_attn.q_proj_extra")
        << std::string("re:.*\\.(q|k|v)_proj") << std::string("model.layers.0.self_attn.q_proj_extra")
        << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*(o|down)_proj$", "model.layers.0.mlp.down_proj")
        << std::string("re:.*(o|down)_proj$") << std::string("model.layers.0.mlp.down_proj") << true;
    QTest::addRow("%d: %s | %s", row++, "re:.*[.]fc$", "model.fc")
        << std::string("re:.*[.]fc$") << std::string("model.fc") << true;
    QTest::addRow("%d: %s | %s", row++, "Linear", "Linear")
        << std::string("Linear") << std::string("Linear") << true;
    QTest::addRow("%d: %s | %s", row++, "lm_head", "lm_head")
        << std::string("lm_head") << std::string("lm_head") << true;
    QTest::addRow("%d: %s | %s", row++, "fc", "model.fc")
        << std::string("fc") << std::string("model.fc") << false;
    QTest::addRow("%d: %s | %s", row++, "model.fc", "model.fc")
        << std::string("model.fc") << std::string("model.fc") << true;
    QTest::addRow("%d: %s | %s", row++, "layers.0.mlp.down_proj", "model.layers.36.mlp.down_proj")
        << std::string("layers.0.mlp.down_proj") << std::string("model.layers.36.mlp.down_proj") << false;
    QTest::addRow("%d: %s | %s", row++, "model.fc", "model.fc1")
        << std::string("model.fc") << std::string("model.fc1") << false;
    QVERIFY(row >= 40);
}

void TestMatcher::pythonReMatch()
{
    QFETCH(std::string, entry);
    QFETCH(std::string, name);
    QFETCH(bool, expected);
    const MatchEntry compiled(entry);
    QVERIFY2(compiled.isValid(), compiled.errorMessage().c_str());
    QCOMPARE(compiled.matches(name), expected);
}

void TestMatcher::invalidRegex_data()
{
    QTest::addColumn<std::string>("entry");
    QTest::addRow("unclosed group") << std::string("re:.*(qkv|q_proj$");
    QTest::addRow("unclosed class") << std::string("re:.*[qkv_proj$");
    QTest::addRow("nothing to repeat") << std::string("re:*fc");
    QTest::addRow("bad range") << std::string("re:[z-a]");
    QTest::addRow("bad group name") << std::string("re:(?P<1a>x)");
    QTest::addRow("unknown backreference") << std::string("re:(?P=missing)");
}

void TestMatcher::invalidRegex()
{
    QFETCH(std::string, entry);
    const MatchEntry compiled(entry);
    QVERIFY(!compiled.isValid());
    const auto patternSize = static_cast<int>(compiled.pattern().size());
    QVERIFY(compiled.errorOffset() >= 0 && compiled.errorOffset() <= patternSize);
    QVERIFY(compiled.errorMessage().find("at position " + std::to_string(compiled.errorOffset())) !=
            std::string::npos);
    QVERIFY(compiled.errorMessage().find(entry) != std::string::npos);
    // An invalid entry never matches (vLLM would raise on it; we refuse before export).
    QVERIFY(!compiled.matches("model.fc"));
}

void TestMatcher::classTarget_data()
{
    QTest::addColumn<std::string>("entry");
    QTest::addColumn<std::string>("className");
    QTest::addColumn<bool>("expected");
    // format-spec §4.4: case-insensitive substring for literals, re.match for "re:".
    QTest::addRow("qkv") << std::string("Linear") << std::string("QKVParallelLinear") << true;
    QTest::addRow("merged") << std::string("Linear") << std::string("MergedColumnParallelLinear") << true;
    QTest::addRow("row") << std::string("Linear") << std::string("RowParallelLinear") << true;
    QTest::addRow("replicated") << std::string("Linear") << std::string("ReplicatedLinear") << true;
    QTest::addRow("column") << std::string("Linear") << std::string("ColumnParallelLinear") << true;
    QTest::addRow("lm head") << std::string("Linear") << std::string("ParallelLMHead") << false;
    QTest::addRow("embedding") << std::string("Linear") << std::string("VocabParallelEmbedding") << false;
    QTest::addRow("lowercase") << std::string("linear") << std::string("RowParallelLinear") << true;
    QTest::addRow("re anchored") << std::string("re:Linear") << std::string("RowParallelLinear") << false;
    QTest::addRow("re suffix") << std::string("re:.*Linear$") << std::string("RowParallelLinear") << true;
}

void TestMatcher::classTarget()
{
    QFETCH(std::string, entry);
    QFETCH(std::string, className);
    QFETCH(bool, expected);
    QCOMPARE(MatchEntry(entry).matchesClass(className), expected);
}

void TestMatcher::unescapedDots_data()
{
    QTest::addColumn<std::string>("entry");
    QTest::addColumn<std::vector<std::size_t>>("dots");
    QTest::addRow("separator") << std::string("re:.*mlp.down_proj") << std::vector<std::size_t>{5};
    QTest::addRow("escaped") << std::string("re:.*mlp\\.down_proj") << std::vector<std::size_t>{};
    QTest::addRow("in class") << std::string("re:.*[.]fc$") << std::vector<std::size_t>{};
    QTest::addRow("wildcards") << std::string("re:.+fc.?$") << std::vector<std::size_t>{};
    QTest::addRow("two") << std::string("re:model.layers.0") << std::vector<std::size_t>{5, 12};
    QTest::addRow("after escaped backslash") << std::string("re:a\\\\.b") << std::vector<std::size_t>{3};
    QTest::addRow("literal entry") << std::string("model.fc") << std::vector<std::size_t>{};
}

void TestMatcher::unescapedDots()
{
    QFETCH(std::string, entry);
    QFETCH(std::vector<std::size_t>, dots);
    QCOMPARE(MatchEntry(entry).unescapedDots(), dots);
}

void TestMatcher::endAnchor_data()
{
    QTest::addColumn<std::string>("entry");
    QTest::addColumn<bool>("anchored");
    QTest::addRow("dollar") << std::string("re:.*fc$") << true;
    QTest::addRow("none") << std::string("re:.*fc") << false;
    QTest::addRow("escaped dollar") << std::string("re:.*fc\\$") << false;
    QTest::addRow("escaped backslash then dollar") << std::string("re:.*fc\\\\$") << true;
    QTest::addRow("backslash Z") << std::string("re:.*fc\\Z") << true;
    QTest::addRow("literal") << std::string("lm_head") << true;
}

void TestMatcher::endAnchor()
{
    QFETCH(std::string, entry);
    QFETCH(bool, anchored);
    QCOMPARE(MatchEntry(entry).hasEndAnchor(), anchored);
}

void TestMatcher::matchEnd()
{
    // re.match consumes "model.fc" of "model.fc1": the match stops inside a name component.
    const MatchEntry unanchored("re:.*fc");
    QCOMPARE(unanchored.matchEnd("model.fc1").value_or(0), std::size_t{8});
    QCOMPARE(unanchored.matchEnd("model.fc").value_or(0), std::size_t{8});
    QVERIFY(!MatchEntry("re:.*fc$").matchEnd("model.fc1").has_value());
    QCOMPARE(MatchEntry("lm_head").matchEnd("lm_head").value_or(0), std::size_t{7});
}

void TestMatcher::fusedShardsDisagree()
{
    // vLLM's should_ignore_layer with packed_modules_mapping: q ignored, k/v not → ValueError (format-spec
    // §4.3).
    const auto ignore = compileEntries({"re:.*\\.q_proj$"});
    const std::string layer = "model.layers.36.self_attn.qkv_proj";
    const auto withMapping = shouldIgnoreLayer(layer, ignore, standardFusedMapping());
    QCOMPARE(withMapping.error,
             std::string("Found a different quantization schemes for ['q_proj', 'k_proj', "
                         "'v_proj'] in model.layers.36.self_attn.qkv_proj. vLLM requires all "
                         "to use the same scheme."));
    // Drafts get no mapping today (vllm#53116): the fused name alone decides, and it is not matched.
    const auto withoutMapping = shouldIgnoreLayer(layer, ignore, {});
    QVERIFY(withoutMapping.error.empty());
    QVERIFY(!withoutMapping.ignored);
    // All shards agree → ignored, no error.
    const auto all =
        shouldIgnoreLayer(layer, compileEntries({"re:.*\\.(q|k|v)_proj$"}), standardFusedMapping());
    QVERIFY(all.error.empty());
    QVERIFY(all.ignored);
    QCOMPARE(all.entryIndex, 0);
}

void TestMatcher::fusedLiteralShortcut()
{
    // `layer_name not in ignore`: a literal listing of the fused name skips the shard expansion.
    const std::string layer = "model.layers.2.mlp.gate_up_proj";
    const auto ignore = compileEntries({"re:.*gate_proj$", layer});
    const auto d = shouldIgnoreLayer(layer, ignore, standardFusedMapping());
    QVERIFY(d.error.empty());
    QVERIFY(d.ignored);
    QCOMPARE(d.entryIndex, 1);
}

void TestMatcher::fusedTargetMatch()
{
    const std::string layer = "model.layers.0.mlp.gate_up_proj";
    const auto targets = compileEntries({"re:.*gate_proj$", "re:.*up_proj$"});
    // Every shard matched by some target: vLLM's _match_fused_layer (with a mapping only).
    QVERIFY(matchesTarget(layer, "Nothing", targets, standardFusedMapping()));
    QVERIFY(!matchesTarget(layer, "Nothing", compileEntries({"re:.*gate_proj$"}), standardFusedMapping()));
    QVERIFY(!matchesTarget(layer, "Nothing", compileEntries({"re:.*\\.gate_proj$"}), {}));
    QVERIFY(matchesTarget(layer, "MergedColumnParallelLinear", compileEntries({"Linear"}), {}));
    QVERIFY(!matchesTarget("lm_head", "ParallelLMHead", compileEntries({"Linear"}), {}));
}

void TestMatcher::evaluateIgnoreListReportsInvalid()
{
    const auto result =
        evaluateIgnoreList({"lm_head", "re:(", "re:.*\\.fc$"}, {"lm_head", "model.fc", "model.fc1"});
    QCOMPARE(result.invalidEntries.size(), std::size_t{1});
    QCOMPARE(result.layers.size(), std::size_t{3});
    QVERIFY(result.layers[0].ignored);
    QVERIFY(result.layers[1].ignored);
    QVERIFY(!result.layers[2].ignored);
}

void TestMatcher::previewWarnings()
{
    const std::vector<DraftModule> modules{
        module("fc", "model.fc", "ReplicatedLinear"),
        module("fc1", "model.fc1", "ReplicatedLinear"),
        module("layers.0.mlp.down_proj", "model.layers.36.mlp.down_proj", "RowParallelLinear"),
    };
    // A literal checkpoint name never equals the prefixed, offset vLLM name.
    const auto literal =
        previewEntry(MatchEntry("layers.0.mlp.down_proj"), EntryKind::Ignore, "--ignore", modules);
    QVERIFY(literal.matches.empty());
    QVERIFY(hasWarning(literal, "a literal name never matches vLLM's prefixed name"));
    QVERIFY(hasWarning(literal, "use re:"));

    // re:.*fc also takes fc1 through its prefix.
    const auto loose = previewEntry(MatchEntry("re:.*fc"), EntryKind::Ignore, "--ignore", modules);
    QCOMPARE(loose.matches.size(), std::size_t{2});
    QVERIFY(hasWarning(loose, "no end anchor"));
    QVERIFY(hasWarning(loose, "model.fc1"));

    const auto dotted =
        previewEntry(MatchEntry("re:.*mlp.down_proj$"), EntryKind::Ignore, "--ignore", modules);
    QCOMPARE(dotted.matches.size(), std::size_t{1});
    QCOMPARE(dotted.matches[0].module, std::string("layers.0.mlp.down_proj"));
    QCOMPARE(dotted.matches[0].vllmName, std::string("model.layers.36.mlp.down_proj"));
    QVERIFY(hasWarning(dotted, "unescaped '.' at position 5"));

    const auto clean = previewEntry(MatchEntry("re:.*\\.fc$"), EntryKind::Ignore, "--ignore", modules);
    QCOMPARE(clean.matches.size(), std::size_t{1});
    QVERIFY(clean.warnings.empty());

    // A class target previews every Linear it selects.
    const auto linear = previewEntry(MatchEntry("Linear"), EntryKind::Target, "preset", modules);
    QCOMPARE(linear.matches.size(), std::size_t{3});
    QVERIFY(linear.warnings.empty());

    const auto invalid = previewEntry(MatchEntry("re:(fc"), EntryKind::Ignore, "--ignore", modules);
    QVERIFY(!invalid.valid);
    QVERIFY(invalid.errorOffset >= 0);
    QVERIFY(invalid.error.find("position") != std::string::npos);
}

QTEST_GUILESS_MAIN(TestMatcher)
#include "tst_matcher.moc"
