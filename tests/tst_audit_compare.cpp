// `compare`: a BF16 source against quantized outputs of it. Every module of a real export is bit-exact with
// compressed-tensors' arithmetic; one changed scale is reported for its module only, with its error.
#include "audittesthelpers.h"
#include "core/audit/comparer.h"
#include "core/io/floatconv.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <cstring>

using namespace spark;
using namespace spark::test;
namespace fs = std::filesystem;

namespace {

std::string describe(const CompareReport& report)
{
    std::string text = report.summary();
    for (const auto& m : report.modules) {
        if (m.bitExact == BitExactness::No || !m.detail.empty()) {
            text += "\n  " + m.module + " " + m.outputScheme + " " +
                    std::string(bitExactnessName(m.bitExact)) + ": " + m.detail;
        }
    }
    for (const auto& t : report.differingTensors) {
        text += "\n  differs " + t;
    }
    for (const auto& t : report.extraTensors) {
        text += "\n  unexpected " + t;
    }
    for (const auto& t : report.missingTensors) {
        text += "\n  missing " + t;
    }
    return text;
}

const ModuleComparison* findModule(const CompareReport& report, const std::string& name)
{
    for (const auto& m : report.modules) {
        if (m.module == name) {
            return &m;
        }
    }
    return nullptr;
}

} // namespace

class TestAuditCompare : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void initTestCase();
    void exportsAreBitExact_data();
    void exportsAreBitExact();
    void oneChangedScaleIsThatModuleOnly();
    void changedCopyAndMissingTensor();
    void cli();
    void unrelatedDraftsAreRefused();

  private:
    QTemporaryDir m_dir;
    fs::path m_root;
};

void TestAuditCompare::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_root = fs::path(m_dir.path().toStdString());
}

void TestAuditCompare::exportsAreBitExact_data()
{
    QTest::addColumn<QString>("arch");
    QTest::addColumn<QStringList>("rules");
    QTest::addRow("qwen3-dflash W4A16") << "qwen3-dflash" << QStringList();
    QTest::addRow("llama-eagle3 W4A16") << "llama-eagle3" << QStringList();
    const QStringList mixed{
        QStringLiteral("re:.*o_proj$=W8A16"), QStringLiteral("re:.*down_proj$=FP8_DYNAMIC"),
        QStringLiteral("re:.*\\.(gate_up|gate|up)_proj$=NVFP4A16"), QStringLiteral("re:.*\\.fc$=W4A16_ASYM")};
    QTest::addRow("llama-eagle3 mixed") << "llama-eagle3" << mixed;
    QTest::addRow("laguna-dflash mixed") << "laguna-dflash" << mixed;
    QTest::addRow("glm-dspark W4A16:g32")
        << "glm-dspark" << QStringList{QStringLiteral("re:.*\\.(o|down|gate|up|gate_up)_proj$=W4A16:g32")};
    QTest::addRow("qwen3-dflash W8A16:channel")
        << "qwen3-dflash"
        << QStringList{QStringLiteral("re:.*\\.(o|down|gate|up|gate_up)_proj$=W8A16:channel"),
                       QStringLiteral("re:.*\\.fc$=NVFP4A16")};
}

void TestAuditCompare::exportsAreBitExact()
{
    QFETCH(QString, arch);
    QFETCH(QStringList, rules);
    std::vector<std::string> ruleList;
    for (const auto& r : rules) {
        ruleList.push_back(r.toStdString());
    }
    const auto name = arch.toStdString() + "-" + std::to_string(rules.size()) + "-" +
                      (rules.isEmpty() ? std::string("w4a16") : rules.front().toStdString().substr(0, 6));
    const auto out = exportDemo(m_root, arch.toStdString(), ruleList, name);
    QVERIFY(!out.empty());
    const auto source = Checkpoint::open(demoSource(m_root, arch.toStdString()));
    const auto output = Checkpoint::open(out);
    const auto report = compareCheckpoints(source, output);
    QVERIFY2(report.ok(), describe(report).c_str());
    QVERIFY(report.quantizedModules() > 0);
    QCOMPARE(report.bitExactModules(), report.quantizedModules());
    QVERIFY(report.quantizedOnlyInSource.empty());
    QCOMPARE(report.quantizedOnlyInOutput.size(), report.quantizedModules());
    for (const auto& m : report.modules) {
        if (m.quantizedInOutput) {
            QVERIFY2(m.relErr && *m.relErr > 0 && *m.relErr < 0.25, m.module.c_str());
            QVERIFY(m.outputBytes < m.sourceBytes);
            QCOMPARE(m.sourceScheme, std::string("BF16"));
        } else {
            QVERIFY2(m.relErr && *m.relErr == 0.0, m.module.c_str()); // BF16 copies
        }
    }
}

void TestAuditCompare::oneChangedScaleIsThatModuleOnly()
{
    const auto out = exportDemo(m_root, "llama-eagle3", {}, "scale-base");
    QVERIFY(!out.empty());
    const auto source = Checkpoint::open(demoSource(m_root, "llama-eagle3"));
    const auto before = compareCheckpoints(source, Checkpoint::open(out));
    QVERIFY2(before.ok(), describe(before).c_str());
    const std::string target = "midlayer.mlp.up_proj";
    const double relBefore = *findModule(before, target)->relErr;

    auto e = EditableCheckpoint::load(out);
    auto& scale = e.tensors.at(target + ".weight_scale").second;
    std::uint16_t bits;
    std::memcpy(&bits, scale.data(), 2);
    bits = floatToBf16(bf16ToFloat(bits) * 4.0f); // one group of row 0 dequantizes four times too large
    std::memcpy(scale.data(), &bits, 2);
    const auto changed = m_root / "scale-changed";
    e.write(changed);

    const auto report = compareCheckpoints(source, Checkpoint::open(changed));
    QVERIFY(!report.ok());
    QCOMPARE(report.bitExactModules(), report.quantizedModules() - 1);
    for (const auto& m : report.modules) {
        if (m.module == target) {
            QCOMPARE(m.bitExact, BitExactness::No);
            QVERIFY2(m.detail.find("weight_scale") != std::string::npos, m.detail.c_str());
            QVERIFY(m.relErr && *m.relErr > relBefore);
        } else if (m.quantizedInOutput) {
            QCOMPARE(m.bitExact, BitExactness::Yes);
        }
    }
    QVERIFY(report.differingTensors.empty());
}

void TestAuditCompare::changedCopyAndMissingTensor()
{
    const auto out = exportDemo(m_root, "qwen3-dflash", {}, "copy-base");
    QVERIFY(!out.empty());
    auto e = EditableCheckpoint::load(out);
    e.tensors.at("norm.weight").second[0] ^= std::byte{1};
    e.tensors.erase("hidden_norm.weight");
    const auto changed = m_root / "copy-changed";
    e.write(changed);
    const auto source = Checkpoint::open(demoSource(m_root, "qwen3-dflash"));
    const auto report = compareCheckpoints(source, Checkpoint::open(changed));
    QVERIFY(!report.ok());
    QCOMPARE(report.differingTensors, std::vector<std::string>{"norm.weight"});
    QCOMPARE(report.missingTensors, std::vector<std::string>{"hidden_norm.weight"});
    QCOMPARE(report.bitExactModules(), report.quantizedModules());
}

void TestAuditCompare::cli()
{
    const auto out = exportDemo(m_root, "llama-eagle3", {}, "cli-base");
    QVERIFY(!out.empty());
    const auto sourcePath = demoSource(m_root, "llama-eagle3");
    const auto ok = runCli({"compare", sourcePath.string(), out.string()});
    QVERIFY2(ok.exitCode == 0, (ok.out + ok.err).c_str());
    QVERIFY2(ok.out.find("bit-exact") != std::string::npos, ok.out.c_str());

    auto e = EditableCheckpoint::load(out);
    e.tensors.at("midlayer.self_attn.o_proj.weight_scale").second[1] ^= std::byte{0x01};
    const auto changed = m_root / "cli-changed";
    e.write(changed);
    const auto bad = runCli({"compare", sourcePath.string(), changed.string(), "--json"});
    QCOMPARE(bad.exitCode, 1);
    const auto json = nlohmann::json::parse(bad.out);
    int notExact = 0;
    int exact = 0;
    for (const auto& m : json["modules"]) {
        // bit_exact is a JSON boolean for quantized modules and null for copies (not the words of the text
        // table).
        const auto& bitExact = m["bit_exact"];
        if (m["quantized_in_output"].get<bool>()) {
            QVERIFY2(bitExact.is_boolean(), m.dump().c_str());
        } else {
            QVERIFY2(bitExact.is_null(), m.dump().c_str());
        }
        if (bitExact == true) {
            ++exact;
        }
        if (bitExact == false) {
            ++notExact;
            QCOMPARE(m["module"].get<std::string>(), std::string("midlayer.self_attn.o_proj"));
            QVERIFY(m["rel_err"].is_number());
        }
    }
    QCOMPARE(notExact, 1);
    QVERIFY(exact > 0);
    QCOMPARE(runCli({"compare", sourcePath.string(), (m_root / "nothing").string()}).exitCode, 2);
}

void TestAuditCompare::unrelatedDraftsAreRefused()
{
    const auto glm = demoSource(m_root, "glm-dspark");
    const auto laguna = exportDemo(m_root, "laguna-dflash", {}, "laguna-unrelated");
    QVERIFY(!laguna.empty());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             compareCheckpoints(Checkpoint::open(glm), Checkpoint::open(laguna)));
    for (const auto& args : {std::vector<std::string>{"compare", glm.string(), laguna.string()},
                             std::vector<std::string>{"compare", glm.string(), laguna.string(), "--json"}}) {
        const auto result = runCli(args);
        QCOMPARE(result.exitCode, 2);
        QVERIFY2(result.out.empty(), result.out.c_str());
        // One line names both folders (a backend notice may come before it).
        const auto at = result.err.find("not a quantization");
        QVERIFY2(at != std::string::npos, result.err.c_str());
        const auto begin = result.err.rfind('\n', at);
        const auto line = result.err.substr(begin == std::string::npos ? 0 : begin + 1);
        QCOMPARE(std::count(line.begin(), line.end(), '\n'), std::ptrdiff_t{1});
        QVERIFY(line.find(glm.string()) != std::string::npos);
        QVERIFY(line.find(laguna.string()) != std::string::npos);
    }
}

QTEST_GUILESS_MAIN(TestAuditCompare)
#include "tst_audit_compare.moc"
