// Importers of core/bench against bench-formats.md §5: the vLLM result JSON samples, the /metrics pair
// (which must reproduce the BF16 JSON's spec-decode fields), the OpenMetrics variant, the Prometheus
// edge cases, the long CSV, log lines and llama-bench; malformed inputs must name file and line.
#include "core/bench/benchcsv.h"
#include "core/bench/bencherror.h"
#include "core/bench/benchimport.h"
#include "core/bench/benchreport.h"
#include "core/bench/llamabench.h"
#include "core/bench/nonfinitejson.h"
#include "core/bench/prometheustext.h"
#include "core/bench/specdecodediff.h"
#include "core/bench/specdecodelog.h"
#include "core/bench/vllmresult.h"
#include "testsupport.h"

#include <QDir>
#include <QTest>
#include <cmath>
#include <nlohmann/json.hpp>

using namespace spark;

namespace {

const char* kBf16Json = "bench/bf16-draft-infqps-concurrency1-Qwen3-32B-20251202-141503.json";
const char* kW4Json = "bench/w4a16-draft-infqps-concurrency1-Qwen3-32B-20251202-143122.json";

bool near(double a, double b, double rel = 1e-9)
{
    return std::abs(a - b) <= rel * std::max(1.0, std::abs(b));
}

bool hasWarning(const std::vector<BenchWarning>& warnings, BenchWarningKind kind)
{
    return std::any_of(warnings.begin(), warnings.end(),
                       [&](const BenchWarning& w) { return w.kind == kind; });
}

} // namespace

class TestBenchImport : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void vllmJsonSamples_data();
    void vllmJsonSamples();
    void vllmJsonLinesAndQuirks();
    void vllmTagsFromFileNameAndCaller();
    void metricsPairMatchesJson();
    void openMetricsVariant();
    void prometheusEdgeCases();
    void prometheusFamilies();
    void malformed_data();
    void malformed();
    void counterResetIsAnError();
    void invariantViolationsWarn();
    void csvLongForm();
    void csvQuotingAndExtras();
    void specDecodeLogLines();
    void llamaBench();
    void dispatcherAndCollapseWarning();
};

void TestBenchImport::vllmJsonSamples_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("arm");
    QTest::addColumn<double>("outputThroughput");
    QTest::addColumn<double>("decodeTokS");
    QTest::addColumn<double>("ratePercent");
    QTest::addColumn<double>("al");
    QTest::addColumn<double>("drafts");
    QTest::addColumn<double>("draftTokens");
    QTest::addColumn<double>("accepted");
    QTest::addColumn<QList<double>>("perPosition");
    // bench-formats §5, printed to the digits shown there.
    QTest::addRow("bf16") << QString::fromLatin1(kBf16Json) << QStringLiteral("bf16_draft") << 44.11903
                          << 44.74441 << 62.2595 << 2.867786 << 2859.0 << 8577.0 << 5340.0
                          << QList<double>{0.802728, 0.603708, 0.461350};
    QTest::addRow("w4a16") << QString::fromLatin1(kW4Json) << QStringLiteral("w4a16_draft") << 46.08600
                           << 46.76037 << 59.6121 << 2.788363 << 2939.0 << 8817.0 << 5256.0
                           << QList<double>{0.776795, 0.582511, 0.429058};
}

void TestBenchImport::vllmJsonSamples()
{
    QFETCH(QString, file);
    QFETCH(QString, arm);
    QFETCH(double, outputThroughput);
    QFETCH(double, decodeTokS);
    QFETCH(double, ratePercent);
    QFETCH(double, al);
    QFETCH(double, drafts);
    QFETCH(double, draftTokens);
    QFETCH(double, accepted);
    QFETCH(QList<double>, perPosition);
    const auto import = importVllmResultFile(test::dataPath(file.toStdString()));
    QCOMPARE(import.records.size(), std::size_t(1));
    const auto& r = import.records.front();
    QCOMPARE(QString::fromStdString(r.arm), arm);
    QCOMPARE(r.promptLen, 2048LL);
    QCOMPARE(r.repeat, 1);
    QCOMPARE(r.sourceLine, 1);
    QCOMPARE(r.extras.at("num_speculative_tokens"), std::string("3"));
    QVERIFY(std::abs(r.metrics.at(benchmetric::kOutputTokS) - outputThroughput) < 5e-6);
    QVERIFY(std::abs(r.metrics.at(benchmetric::kDecodeTokS) - decodeTokS) < 5e-6);
    QVERIFY(std::abs(100 * r.metrics.at(benchmetric::kAcceptanceRate) - ratePercent) < 5e-5);
    QVERIFY(std::abs(r.metrics.at(benchmetric::kAcceptanceLength) - al) < 5e-7);
    QVERIFY(r.counters);
    QCOMPARE(r.counters->numDrafts, drafts);
    QCOMPARE(r.counters->draftTokens, draftTokens);
    QCOMPARE(r.counters->acceptedTokens, accepted);
    QCOMPARE(r.perPositionAcceptance.size(), std::size_t(perPosition.size()));
    for (int i = 0; i < perPosition.size(); ++i) {
        QVERIFY(std::abs(r.perPositionAcceptance[std::size_t(i)] - perPosition[i]) < 5e-7);
    }
    QVERIFY(r.counters->invariantViolations().empty());
    QVERIFY(!hasWarning(import.warnings, BenchWarningKind::InvariantViolated));
    // max_output_tokens_per_s counts chunks, not tokens (bench-formats §1.3): kept, but never used as a rate.
    QVERIFY(r.metrics.count("max_output_tokens_per_s"));
}

void TestBenchImport::vllmJsonLinesAndQuirks()
{
    // The detailed W4A16 sample: Σlen(itls) = drafts (bench-formats §5), and the pooled decode rate is close
    // to 1000/TPOT.
    const auto text = test::readFile(test::dataPath(kW4Json));
    const auto doc = nlohmann::json::parse(text);
    std::size_t chunks = 0;
    for (const auto& itl : doc.at("itls")) {
        chunks += itl.size();
    }
    QCOMPARE(chunks, std::size_t(2939));
    const auto w4 = parseVllmResult(text, "w4.json");
    QVERIFY(w4.records.front().metrics.count(benchmetric::kDecodeTokSPooled));
    QVERIFY(std::abs(w4.records.front().metrics.at(benchmetric::kDecodeTokSPooled) / 46.76037 - 1) < 0.02);

    // --append-result: JSON Lines with a legacy key and a bare Infinity (burstiness) and NaN.
    const std::string jsonl =
        "{\"arm\": \"a\", \"prompt_len\": \"512\", \"mean_tpot_ms\": 20.0, \"request_goodput:\": 1.5, "
        "\"burstiness\": Infinity, \"note\": \"NaN stays a string\"}\n"
        "{\"arm\": \"a\", \"prompt_len\": 512, \"mean_tpot_ms\": 25.0, \"x\": -Infinity, \"y\": [NaN, 1]}";
    const auto import = parseVllmResult(jsonl, "runs.jsonl");
    QCOMPARE(import.records.size(), std::size_t(2));
    QCOMPARE(import.records[0].metrics.at(benchmetric::kDecodeTokS), 50.0);
    QCOMPARE(import.records[1].metrics.at(benchmetric::kDecodeTokS), 40.0);
    QCOMPARE(import.records[0].metrics.at("request_goodput"), 1.5);
    QCOMPARE(import.records[0].extras.at("note"), std::string("NaN stays a string"));
    QCOMPARE(import.records[0].repeat, 1); // line index when no repeat metadata
    QCOMPARE(import.records[1].repeat, 2);
    QCOMPARE(import.records[1].sourceLine, 2);
    QCOMPARE(import.records[1].promptLen, 512LL);
    QVERIFY(hasWarning(import.warnings, BenchWarningKind::LegacyKey));
    int nonFinite = 0;
    for (const auto& w : import.warnings) {
        if (w.kind == BenchWarningKind::NonFiniteValue) {
            ++nonFinite;
            QCOMPARE(w.file, std::string("runs.jsonl"));
            QVERIFY(w.line == 1 || w.line == 2);
        }
    }
    QCOMPARE(nonFinite, 3);
    const auto sanitized = sanitizeNonFiniteJson("{\"burstiness\": Infinity}");
    QCOMPARE(sanitized.text, std::string("{\"burstiness\": null}"));
    QCOMPARE(sanitized.replacements.front().key, std::string("burstiness"));
}

void TestBenchImport::vllmTagsFromFileNameAndCaller()
{
    QCOMPARE(armFromVllmFileName("bf16-draft-infqps-concurrency1-Qwen3-32B-20251202-141503.json"),
             std::string("bf16-draft"));
    QCOMPARE(armFromVllmFileName("x-ramp-up-linear-1qps-5qps-m-20250101-000000.json"), std::string("x"));
    QCOMPARE(armFromVllmFileName("results.json"), std::string());
    // No metadata: arm from the file name, prompt length from total_input_tokens / completed.
    const std::string bare = "{\"total_input_tokens\": 8192, \"completed\": 4, \"mean_tpot_ms\": 10}";
    auto import = parseVllmResult(bare, "/tmp/w4-2.5qps-concurrency1-m-20250101-000000.json");
    QCOMPARE(import.records[0].arm, std::string("w4"));
    QCOMPARE(import.records[0].promptLen, 2048LL);
    QVERIFY(hasWarning(import.warnings, BenchWarningKind::InferredTag));
    // Caller input fills what the file lacks, and overrides only when asked.
    RecordTags tags;
    tags.arm = "given";
    tags.promptLen = 100;
    import = parseVllmResult(bare, "plain.json", tags);
    QCOMPARE(import.records[0].arm, std::string("given"));
    QCOMPARE(import.records[0].promptLen, 100LL);
    const auto sample = test::readFile(test::dataPath(kBf16Json));
    QCOMPARE(parseVllmResult(sample, "s.json", tags).records[0].arm, std::string("bf16_draft"));
    tags.override = true;
    QCOMPARE(parseVllmResult(sample, "s.json", tags).records[0].arm, std::string("given"));
}

void TestBenchImport::metricsPairMatchesJson()
{
    const auto before = loadPrometheusFile(test::dataPath("bench/metrics_before.prom"));
    const auto after = loadPrometheusFile(test::dataPath("bench/metrics_after.prom"));
    QVERIFY(!after.isOpenMetrics());
    const auto delta = diffSpecDecode(before, after);
    QCOMPARE(delta.counters.numDrafts, 2859.0);
    QCOMPARE(delta.counters.draftTokens, 8577.0);
    QCOMPARE(delta.counters.acceptedTokens, 5340.0);
    QCOMPARE(delta.counters.acceptedPerPosition, (std::vector<double>{2295, 1726, 1319}));
    QVERIFY(delta.warnings.empty());
    QCOMPARE(delta.modelNames, std::vector<std::string>{"Qwen/Qwen3-32B"});

    // The same acceptance fields as the BF16 JSON's spec_decode_* keys.
    const auto json = importVllmResultFile(test::dataPath(kBf16Json)).records.front();
    QVERIFY(near(100 * delta.counters.acceptanceRate(), json.metrics.at("spec_decode_acceptance_rate")));
    QVERIFY(near(delta.counters.meanAcceptanceLength(), json.metrics.at("spec_decode_acceptance_length")));
    const auto rates = delta.counters.perPositionRates();
    QCOMPARE(rates.size(), json.perPositionAcceptance.size());
    for (std::size_t i = 0; i < rates.size(); ++i) {
        QVERIFY(near(rates[i], json.perPositionAcceptance[i]));
    }
    QCOMPARE(delta.counters.numDrafts, json.counters->numDrafts);
    QCOMPARE(delta.counters.acceptedPerPosition, json.counters->acceptedPerPosition);

    // Other counters of bench-formats §5: prompt and generation tokens, finished requests.
    const PromLabels engine{{"engine", "0"}, {"model_name", "Qwen/Qwen3-32B"}};
    const auto diff = [&](const char* name, const PromLabels& labels) {
        return after.find(name, labels)->value - before.find(name, labels)->value;
    };
    QCOMPARE(diff("vllm:prompt_tokens_total", engine), 32768.0);
    QCOMPARE(diff("vllm:generation_tokens_total", engine), 8192.0);
    auto lengthLabels = engine;
    lengthLabels["finished_reason"] = "length";
    QCOMPARE(diff("vllm:request_success_total", lengthLabels), 16.0);
    QCOMPARE(after.find("process_virtual_memory_bytes")->value, 27158921216.0);
    QCOMPARE(after.find("vllm:spec_decode_num_drafts_created", engine)->type, std::string("gauge"));
}

void TestBenchImport::openMetricsVariant()
{
    const auto om = loadPrometheusFile(test::dataPath("bench/metrics_after_openmetrics_variant.txt"));
    QVERIFY(om.isOpenMetrics());
    const auto* s =
        om.find("vllm:spec_decode_num_drafts_total", {{"engine", "0"}, {"model_name", "Qwen/Qwen3-32B"}});
    QVERIFY(s);
    QCOMPARE(s->family, std::string("vllm:spec_decode_num_drafts"));
    QCOMPARE(s->type, std::string("counter"));
    // Same values as the text-format scrape: the OpenMetrics 'after' differenced with the text 'before'.
    const auto before = loadPrometheusFile(test::dataPath("bench/metrics_before.prom"));
    const auto text = specDecodeTotals(loadPrometheusFile(test::dataPath("bench/metrics_after.prom")));
    const auto totals = specDecodeTotals(om);
    QCOMPARE(totals.numDrafts, text.numDrafts);
    QCOMPARE(totals.draftTokens, text.draftTokens);
    QCOMPARE(totals.acceptedTokens, text.acceptedTokens);
    QCOMPARE(totals.acceptedPerPosition, text.acceptedPerPosition);
    const auto delta = diffSpecDecode(before, om);
    QCOMPARE(delta.counters.acceptedPerPosition, (std::vector<double>{2295, 1726, 1319}));
}

void TestBenchImport::prometheusEdgeCases()
{
    const auto snap = loadPrometheusFile(test::dataPath("bench/prometheus_edge_cases.prom"));
    const auto* msdos =
        snap.find("msdos_file_access_time_seconds",
                  {{"path", "C:\\DIR\\FILE.TXT"}, {"error", "Cannot find file:\n\"FILE.TXT\""}});
    QVERIFY(msdos);
    QCOMPARE(msdos->value, 1.458255915e9);
    QCOMPARE(snap.families().at("msdos_file_access_time_seconds").help,
             std::string("Help with a backslash \\ and an escaped newline \n inside."));
    const auto* post = snap.find("http_requests_total", {{"method", "post"}, {"code", "200"}});
    QVERIFY(post);
    QCOMPARE(post->value, 1027.0);
    QCOMPARE(*post->timestamp, 1395066363000.0);
    const auto* bad = snap.find("http_requests_total", {{"method", "post"}, {"code", "400"}});
    QCOMPARE(bad->value, 3.0);
    QCOMPARE(*bad->timestamp, 1395066363000.0);
    const auto* plain = snap.find("metric_without_timestamp_and_labels");
    QCOMPARE(plain->value, 12.47);
    QVERIFY(!plain->timestamp);
    const auto* weird = snap.find("something_weird", {{"problem", "division by zero"}});
    QVERIFY(std::isinf(weird->value) && weird->value > 0);
    QCOMPARE(*weird->timestamp, -3982045.0);
    QVERIFY(std::isnan(snap.find("nan_gauge")->value));
    QVERIFY(std::isinf(snap.find("neg_inf_gauge")->value) && snap.find("neg_inf_gauge")->value < 0);
    QCOMPARE(snap.find("exp_values", {{"kind", "small"}})->value, 1.5e-07);
    QCOMPARE(snap.find("exp_values", {{"kind", "py_client_quirk"}})->value, 27158921216.0);
    QCOMPARE(snap.find("exp_values", {{"kind", "upper_e"}})->value, 1000.0);
    const double negZero = snap.find("exp_values", {{"kind", "neg_zero"}})->value;
    QVERIFY(negZero == 0.0 && std::signbit(negZero));
    QCOMPARE(snap.find("exp_values", {{"kind", "int"}})->value, 42.0);
    QCOMPARE(snap.find("trailing_comma", {{"a", "1"}})->value, 4.0);
    QCOMPARE(snap.find("tab_separated", {{"a", "x"}})->value, 5.0);
    QCOMPARE(snap.find("tricky_label_values",
                       {{"model_name", "org/model,v=2}"}, {"handler", "/v1/chat completions"}, {"empty", ""}})
                 ->value,
             6.0);
    const PromLabels quoted{{"engine", "0"}, {"model_name", "a\"quoted\"\\model"}, {"position", "0"}};
    QCOMPARE(snap.find("vllm:spec_decode_num_accepted_tokens_per_pos_total", quoted)->value, 3134.0);
    auto quoted1 = quoted;
    quoted1["position"] = "1";
    QCOMPARE(snap.find("vllm:spec_decode_num_accepted_tokens_per_pos_total", quoted1)->value, 2391.0);
    const auto* bucket8 = snap.find("vllm:iteration_tokens_total_bucket",
                                    {{"engine", "0"}, {"le", "8.0"}, {"model_name", "m"}});
    QCOMPARE(bucket8->value, 3917.0);
    QCOMPARE(bucket8->type, std::string("histogram"));
    QCOMPARE(bucket8->family, std::string("vllm:iteration_tokens_total"));
    QCOMPARE(snap.find("vllm:iteration_tokens_total_bucket",
                       {{"engine", "0"}, {"le", "+Inf"}, {"model_name", "m"}})
                 ->value,
             3939.0);
    const auto* count =
        snap.find("vllm:iteration_tokens_total_count", {{"engine", "0"}, {"model_name", "m"}});
    QCOMPARE(count->value, 3939.0);
    QCOMPARE(count->family, std::string("vllm:iteration_tokens_total"));
    QCOMPARE(snap.find("vllm:iteration_tokens_total_sum", {{"engine", "0"}, {"model_name", "m"}})->value,
             60724.0);
    QCOMPARE(snap.find("untyped_without_type_line")->value, 7.0);
    QCOMPARE(snap.find("untyped_without_type_line")->type, std::string("untyped"));
    QCOMPARE(snap.find("untyped_without_type_line")->line, 31);
    QCOMPARE(snap.samples().size(), std::size_t(22));
}

void TestBenchImport::prometheusFamilies()
{
    // The suffix never decides the type: a gauge named *_total stays a gauge.
    const auto snap =
        parsePrometheusText("# TYPE a_total gauge\na_total 1\n# TYPE c counter\nc_total 2\nc_created 3\n"
                            "# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 2\ns_count 3\n",
                            "f.prom");
    QCOMPARE(snap.find("a_total")->type, std::string("gauge"));
    QCOMPARE(snap.find("c_total")->family, std::string("c"));
    QCOMPARE(snap.find("c_created")->family, std::string("c"));
    QCOMPARE(snap.find("s", {{"quantile", "0.5"}})->type, std::string("summary"));
    QCOMPARE(snap.find("s_count")->family, std::string("s"));
    QVERIFY(!parsePromNumber("0x10"));
    QVERIFY(!parsePromNumber("1,5"));
    QVERIFY(!parsePromNumber("infinity"));
    QCOMPARE(*parsePromNumber("+1.5E+2"), 150.0);
}

void TestBenchImport::malformed_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("fragment");
    QTest::addRow("prom_unterminated_label") << "prom"
                                             << "ok 1\nbad{a=\"x} 2\n"
                                             << 2 << "unterminated";
    QTest::addRow("prom_bad_value") << "prom"
                                    << "# HELP x y\n\nx 1.2.3\n"
                                    << 3 << "invalid value";
    QTest::addRow("prom_missing_value") << "prom"
                                        << "x{a=\"1\"}\n"
                                        << 1 << "missing value";
    QTest::addRow("prom_bad_escape") << "prom"
                                     << "x{a=\"\\t\"} 1\n"
                                     << 1 << "invalid escape";
    QTest::addRow("prom_duplicate_series") << "prom"
                                           << "x{a=\"1\",b=\"2\"} 1\nx{b=\"2\",a=\"1\"} 2\n"
                                           << 2 << "duplicate series";
    QTest::addRow("prom_duplicate_label") << "prom"
                                          << "x{a=\"1\",a=\"2\"} 1\n"
                                          << 1 << "repeated";
    QTest::addRow("prom_second_type") << "prom"
                                      << "# TYPE x gauge\n# TYPE x counter\n"
                                      << 2 << "second TYPE";
    QTest::addRow("prom_unknown_type") << "prom"
                                       << "# TYPE x weird\n"
                                       << 1 << "unknown metric type";
    QTest::addRow("prom_after_eof") << "prom"
                                    << "x 1\n# EOF\ny 2\n"
                                    << 3 << "after '# EOF'";
    QTest::addRow("prom_trailing_junk") << "prom"
                                        << "x 1 2 3\n"
                                        << 1 << "unexpected text";
    QTest::addRow("prom_fractional_ts") << "prom"
                                        << "x 1 1.5\n"
                                        << 1 << "timestamp";
    QTest::addRow("prom_bad_name") << "prom"
                                   << "9x 1\n"
                                   << 1 << "expected a name";
    QTest::addRow("json_syntax") << "json"
                                 << "{\"a\": 1,\n \"b\": }" << 2 << "malformed JSON";
    QTest::addRow("json_duplicate_key") << "json"
                                        << "{\"a\": 1, \"a\": 2}" << 1 << "duplicate key";
    QTest::addRow("jsonl_bad_line") << "json"
                                    << "{\"completed\": 1}\n{\"completed\": 2}\n{\"a\": \n"
                                    << 3 << "malformed JSON";
    QTest::addRow("jsonl_not_object") << "json"
                                      << "{\"completed\": 1}\n{\"completed\": 2}\n[1]\n"
                                      << 3 << "expected a JSON object";
    QTest::addRow("json_model_config")
        << "json"
        << "{\"architectures\": [\"LlamaForCausalLMEagle3\"], \"hidden_size\": 256}" << 1
        << "a model's config.json, not a vllm bench serve result";
    QTest::addRow("jsonl_no_result_keys") << "json"
                                          << "{\"completed\": 1}\n{\"arm\": \"a\"}\n"
                                          << 2 << "not a vllm bench serve result";
    QTest::addRow("json_array") << "json"
                                << "[1, 2]" << 1 << "expected a JSON object";
    QTest::addRow("json_bad_prompt_len")
        << "json"
        << "{\"arm\": \"a\", \"completed\": 1, \"prompt_len\": \"long\"}" << 1 << "prompt_len";
    QTest::addRow("csv_field_count") << "csv"
                                     << "arm,prompt_len,decode_tok_s\na,512,1\nb,512\n"
                                     << 3 << "expected 3 fields";
    QTest::addRow("csv_not_number") << "csv"
                                    << "arm,prompt_len,decode_tok_s\na,512,fast\n"
                                    << 2 << "not a number";
    QTest::addRow("csv_not_integer") << "csv"
                                     << "arm,prompt_len\na,512.5\n"
                                     << 2 << "not an integer";
    QTest::addRow("csv_unterminated") << "csv"
                                      << "arm,note\na,ok\nb,\"open\nstill\n"
                                      << 3 << "unterminated";
    QTest::addRow("csv_no_arm") << "csv"
                                << "prompt_len,decode_tok_s\n512,1\n"
                                << 1 << "no 'arm' column";
    QTest::addRow("csv_dup_column") << "csv"
                                    << "arm,repeat,Repeat\na,1,2\n"
                                    << 1 << "appears twice";
    QTest::addRow("log_missing_field") << "log"
                                       << "INFO start\nSpecDecoding metrics: Mean acceptance length: 2.1, "
                                          "Accepted: 10 tokens\n"
                                       << 2 << "Drafted";
    QTest::addRow("llama_no_avg") << "llama"
                                  << "[{\"n_prompt\": 0, \"n_gen\": 128}]" << 1 << "avg_ts";
}

void TestBenchImport::malformed()
{
    QFETCH(QString, kind);
    QFETCH(QString, text);
    QFETCH(int, line);
    QFETCH(QString, fragment);
    const std::string file = "input." + kind.toStdString();
    const std::string body = text.toStdString();
    try {
        if (kind == QLatin1String("prom")) {
            parsePrometheusText(body, file);
        } else if (kind == QLatin1String("json")) {
            parseVllmResult(body, file);
        } else if (kind == QLatin1String("csv")) {
            parseBenchCsv(body, file);
        } else if (kind == QLatin1String("log")) {
            parseSpecDecodeLog(body, file);
        } else {
            parseLlamaBench(body, file);
        }
        QFAIL("no error");
    } catch (const BenchError& e) {
        QCOMPARE(e.file(), file);
        QCOMPARE(e.line(), line);
        const std::string what = e.what();
        QVERIFY2(what.rfind(file + ":" + std::to_string(line) + ": ", 0) == 0, what.c_str());
        QVERIFY2(what.find(fragment.toStdString()) != std::string::npos, what.c_str());
    }
}

void TestBenchImport::counterResetIsAnError()
{
    const auto before = loadPrometheusFile(test::dataPath("bench/metrics_before.prom"));
    const auto after = loadPrometheusFile(test::dataPath("bench/metrics_after.prom"));
    // Swapped order: every counter went down, like a server restart.
    try {
        diffSpecDecode(after, before);
        QFAIL("no error");
    } catch (const BenchError& e) {
        QVERIFY(e.file().find("metrics_before.prom") != std::string::npos);
        QVERIFY(e.line() > 0);
        QVERIFY(std::string(e.what()).find("restarted") != std::string::npos);
    }
    QVERIFY_THROWS_EXCEPTION(BenchError, specDecodeTotals(parsePrometheusText("x 1\n", "plain.prom")));
}

void TestBenchImport::invariantViolationsWarn()
{
    // Two engines and a position that appears only in 'after' (before = 0); per-position sum ≠ accepted.
    const std::string before = "vllm:spec_decode_num_drafts_total{engine=\"0\",model_name=\"m\"} 10\n"
                               "vllm:spec_decode_num_drafts_total{engine=\"1\",model_name=\"m\"} 10\n"
                               "vllm:spec_decode_num_draft_tokens_total{engine=\"0\",model_name=\"m\"} 20\n"
                               "vllm:spec_decode_num_draft_tokens_total{engine=\"1\",model_name=\"m\"} 20\n"
                               "vllm:spec_decode_num_accepted_tokens_total{engine=\"0\",model_name=\"m\"} 5\n"
                               "vllm:spec_decode_num_accepted_tokens_total{engine=\"1\",model_name=\"m\"} 5\n"
                               "vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"0\",model_name="
                               "\"m\",position=\"0\"} 5\n";
    const std::string after = "vllm:spec_decode_num_drafts_total{model_name=\"m\",engine=\"0\"} 20\n"
                              "vllm:spec_decode_num_drafts_total{model_name=\"m\",engine=\"1\"} 30\n"
                              "vllm:spec_decode_num_draft_tokens_total{engine=\"0\",model_name=\"m\"} 40\n"
                              "vllm:spec_decode_num_draft_tokens_total{engine=\"1\",model_name=\"m\"} 60\n"
                              "vllm:spec_decode_num_accepted_tokens_total{engine=\"0\",model_name=\"m\"} 15\n"
                              "vllm:spec_decode_num_accepted_tokens_total{engine=\"1\",model_name=\"m\"} 25\n"
                              "vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"0\",model_name="
                              "\"m\",position=\"0\"} 10\n"
                              "vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"0\",model_name="
                              "\"m\",position=\"1\"} 20\n";
    const auto delta =
        diffSpecDecode(parsePrometheusText(before, "b.prom"), parsePrometheusText(after, "a.prom"));
    QCOMPARE(delta.counters.numDrafts, 30.0);
    QCOMPARE(delta.counters.draftTokens, 60.0);
    QCOMPARE(delta.counters.acceptedTokens, 30.0);
    QCOMPARE(delta.counters.acceptedPerPosition, (std::vector<double>{5, 20}));
    int violations = 0;
    for (const auto& w : delta.warnings) {
        if (w.kind == BenchWarningKind::InvariantViolated) {
            ++violations;
            QCOMPARE(w.file, std::string("a.prom"));
        }
    }
    QCOMPARE(violations, 2); // the sum (25 ≠ 30) and the non-increasing order (20 > 5)
    QCOMPARE(delta.counters.meanAcceptanceLength(), 2.0);
    QCOMPARE(delta.counters.acceptanceRate(), 0.5);
}

void TestBenchImport::csvLongForm()
{
    const auto import = importBenchCsvFile(test::dataPath("bench/spec_decode_repeats_long.csv"));
    QCOMPARE(import.records.size(), std::size_t(72));
    QVERIFY(import.warnings.empty());
    const auto& first = import.records.front();
    QCOMPARE(first.arm, std::string("bf16_draft"));
    QCOMPARE(first.promptLen, 512LL);
    QCOMPARE(first.repeat, 1);
    QCOMPARE(first.sourceLine, 2);
    QCOMPARE(first.metrics.at(benchmetric::kDecodeTokS), 47.83);
    QCOMPARE(first.metrics.at(benchmetric::kAcceptanceRate), 0.6329);
    QCOMPARE(first.perPositionAcceptance, (std::vector<double>{0.8167, 0.6171, 0.4650}));
    QCOMPARE(first.counters->numDrafts, 1413.0);
    QCOMPARE(first.counters->draftTokens, 4239.0);
    // bench-formats §5 invariants per row: Σ acc_pos = AL − 1 (to rounding), draft tokens = 3 · drafts.
    for (const auto& r : import.records) {
        const double sum =
            r.perPositionAcceptance[0] + r.perPositionAcceptance[1] + r.perPositionAcceptance[2];
        QVERIFY(std::abs(sum - (r.metrics.at(benchmetric::kAcceptanceLength) - 1)) < 5e-4);
        QCOMPARE(r.counters->draftTokens, 3 * r.counters->numDrafts);
    }
    const auto report = buildBenchReport(import.records);
    QCOMPARE(report.baselineArm, std::string("bf16_draft")); // picked by name without --baseline
    QCOMPARE(report.cells.size(), std::size_t(6));
    QCOMPARE(report.promptLens, (std::vector<long long>{512, 2048, 8192}));
    QVERIFY(!hasWarning(report.warnings, BenchWarningKind::AcceptanceCollapse));
}

void TestBenchImport::csvQuotingAndExtras()
{
    const std::string csv = "\xEF\xBB\xBF"
                            "Arm, Prompt Length ,decode_tok_s,note,gpu_temp,acceptance_rate\r\n"
                            "\"bf16, v2\",512,40.5,\"said \"\"hi\"\"\nnext line\",61,62.5\r\n"
                            "w4,512,41,,60,0.6\r\n";
    const auto import = parseBenchCsv(csv, "q.csv");
    QCOMPARE(import.records.size(), std::size_t(2));
    const auto& r = import.records[0];
    QCOMPARE(r.arm, std::string("bf16, v2"));
    QCOMPARE(r.promptLen, 512LL);
    QCOMPARE(r.extras.at("note"), std::string("said \"hi\"\nnext line"));
    QCOMPARE(r.extras.at("gpu_temp"), std::string("61"));
    QCOMPARE(r.metrics.at("gpu_temp"), 61.0);
    QCOMPARE(r.metrics.at(benchmetric::kAcceptanceRate), 0.625); // a percent, converted
    QVERIFY(hasWarning(import.warnings, BenchWarningKind::UnitConverted));
    QCOMPARE(import.records[1].sourceLine, 4); // the quoted newline moves the next record down a line
    QVERIFY(!import.records[1].metrics.count("note"));
}

void TestBenchImport::specDecodeLogLines()
{
    const std::string log =
        "INFO 12-02 14:15:00 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s\n"
        "INFO 12-02 14:15:03 [metrics.py:84] SpecDecoding metrics: Mean acceptance length: 2.87, Accepted "
        "throughput: 30.12 tokens/s, Drafted throughput: 45.00 tokens/s, Accepted: 172 tokens, Drafted: 270 "
        "tokens, Per-position acceptance rate: 0.800, 0.600, 0.511, Avg Draft acceptance rate: 63.7%\n"
        "INFO 12-02 14:15:08 [metrics.py:84] SpecDecoding metrics: Mean acceptance length: 3.00, Accepted "
        "throughput: 40.00 tokens/s, Drafted throughput: 60.00 tokens/s, Accepted: 20 tokens, Drafted: 30 "
        "tokens, Per-position acceptance rate: 1.000, 0.500, 0.500, Avg Draft acceptance rate: 66.7%\n";
    RecordTags tags;
    tags.arm = "bf16";
    const auto parsed = parseSpecDecodeLog(log, "server.log", tags);
    QCOMPARE(parsed.entries.size(), std::size_t(2));
    QCOMPARE(parsed.entries[0].line, 2);
    QCOMPARE(parsed.entries[0].meanAcceptanceLength, 2.87);
    QCOMPARE(*parsed.entries[0].acceptedThroughput, 30.12);
    QCOMPARE(*parsed.entries[0].draftedThroughput, 45.0);
    QCOMPARE(parsed.entries[0].perPositionRates, (std::vector<double>{0.8, 0.6, 0.511}));
    QCOMPARE(*parsed.entries[1].acceptanceRatePercent, 66.7);
    const auto& r = parsed.import.records.front();
    QCOMPARE(r.arm, std::string("bf16"));
    QCOMPARE(r.counters->numDrafts, 100.0); // 270/3 + 30/3
    QCOMPARE(r.counters->acceptedTokens, 192.0);
    QCOMPARE(r.metrics.at(benchmetric::kAcceptanceRate), 192.0 / 300.0);
    QCOMPARE(r.metrics.at(benchmetric::kAcceptanceLength), 2.92);
    QCOMPARE(r.counters->acceptedPerPosition, (std::vector<double>{82, 59, 51}));
    QVERIFY_THROWS_EXCEPTION(BenchError, parseSpecDecodeLog("nothing here\n", "empty.log"));
}

void TestBenchImport::llamaBench()
{
    // Field values from the llama-bench README example shape (bench-formats §3.2): stddev_ts is the n−1 sd.
    const std::string json =
        "[{\"build_commit\": \"abc\", \"model_filename\": \"models/draft-bf16.gguf\", \"n_prompt\": 0, "
        "\"n_gen\": 128, \"n_depth\": 0, \"avg_ts\": 130.0, \"stddev_ts\": 1.5811388300841898, "
        "\"samples_ts\": [128, 129, 130, 131, 132]},"
        " {\"model_filename\": \"models/draft-bf16.gguf\", \"n_prompt\": 512, \"n_gen\": 0, \"avg_ts\": "
        "5000.0}]";
    const auto import = parseLlamaBench(json, "lb.json");
    QCOMPARE(import.records.size(), std::size_t(6));
    QCOMPARE(import.records[0].arm, std::string("draft-bf16"));
    QCOMPARE(import.records[0].metrics.at(benchmetric::kDecodeTokS), 128.0);
    QCOMPARE(import.records[4].repeat, 5);
    QCOMPARE(import.records[0].extras.at("test"), std::string("tg128"));
    QCOMPARE(import.records[5].metrics.at(benchmetric::kPrefillTokS), 5000.0);
    QCOMPARE(import.records[5].promptLen, 512LL);
    QVERIFY(hasWarning(import.warnings, BenchWarningKind::TooFewRepeats));
    const auto report = buildBenchReport(import.records);
    const auto* cell = report.cell("draft-bf16", 0);
    QVERIFY(cell);
    QCOMPARE(cell->metric(benchmetric::kDecodeTokS)->mean, 130.0);
    QVERIFY(near(cell->metric(benchmetric::kDecodeTokS)->sd, 1.5811388300841898));
    // JSON Lines form.
    const auto jsonl =
        parseLlamaBench("{\"n_prompt\": 0, \"n_gen\": 64, \"avg_ts\": 10, \"samples_ts\": [10]}\n"
                        "{\"n_prompt\": 0, \"n_gen\": 64, \"avg_ts\": 11, \"samples_ts\": [11]}\n",
                        "lb.jsonl");
    QCOMPARE(jsonl.records.size(), std::size_t(2));
    QCOMPARE(jsonl.records[1].sourceLine, 2);
}

void TestBenchImport::dispatcherAndCollapseWarning()
{
    const auto dir = std::filesystem::path(QDir::tempPath().toStdString()) / "tst_bench_import";
    std::filesystem::remove_all(dir);
    const auto before = test::dataPath("bench/metrics_before.prom");
    const auto after = test::dataPath("bench/metrics_after_openmetrics_variant.txt");
    QCOMPARE(detectBenchFileKind(before, test::readFile(before)), BenchFileKind::PrometheusText);
    QCOMPARE(detectBenchFileKind(after, test::readFile(after)), BenchFileKind::PrometheusText);
    const auto csv = test::dataPath("bench/spec_decode_repeats_long.csv");
    QCOMPARE(detectBenchFileKind(csv, test::readFile(csv)), BenchFileKind::Csv);
    QCOMPARE(detectBenchFileKind("x.pytorch.json", "[]"), BenchFileKind::PytorchSidecar);

    // A wrongly paired quantized draft: a healthy baseline, then ~1% acceptance and no error.
    test::writeFile(dir / "collapse.csv",
                    "arm,prompt_len,repeat,decode_tok_s,acceptance_rate,acceptance_length\n"
                    "bf16,512,1,45,0.62,2.87\nbf16,512,2,46,0.63,2.88\n"
                    "w4a16,512,1,30,0.01,1.03\nw4a16,512,2,31,0.012,1.04\n");
    RecordTags tags;
    tags.arm = "bf16_metrics";
    tags.promptLen = 2048;
    const auto import = importBenchFiles({before, after, dir / "collapse.csv"}, tags);
    QCOMPARE(import.records.size(), std::size_t(5));
    QCOMPARE(import.records[0].arm, std::string("bf16_metrics"));
    QCOMPARE(import.records[0].counters->acceptedTokens, 5340.0);
    BenchReportOptions options;
    options.baselineArm = "bf16";
    const auto report = buildBenchReport(import.records, options, import.warnings);
    QVERIFY(hasWarning(report.warnings, BenchWarningKind::AcceptanceCollapse));
    const auto collapse =
        std::find_if(report.warnings.begin(), report.warnings.end(),
                     [](const BenchWarning& w) { return w.kind == BenchWarningKind::AcceptanceCollapse; });
    QVERIFY(collapse->message.find("'w4a16'") != std::string::npos);
    QVERIFY(collapse->file.find("collapse.csv") != std::string::npos);
    // An odd number of scrapes cannot be paired.
    QVERIFY_THROWS_EXCEPTION(BenchError, importBenchFiles({before}, tags));
    std::filesystem::remove_all(dir);
}

QTEST_GUILESS_MAIN(TestBenchImport)
#include "tst_bench_import.moc"
