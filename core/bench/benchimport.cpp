#include "core/bench/benchimport.h"

#include "core/bench/benchcsv.h"
#include "core/bench/bencherror.h"
#include "core/bench/llamabench.h"
#include "core/bench/prometheustext.h"
#include "core/bench/specdecodediff.h"
#include "core/bench/specdecodelog.h"
#include "core/bench/vllmresult.h"

#include <optional>

namespace spark {
namespace {

bool endsWith(const std::string& s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

const char* benchFileKindName(BenchFileKind kind)
{
    switch (kind) {
    case BenchFileKind::VllmResult:
        return "vllm-result";
    case BenchFileKind::LlamaBench:
        return "llama-bench";
    case BenchFileKind::PrometheusText:
        return "prometheus";
    case BenchFileKind::Csv:
        return "csv";
    case BenchFileKind::SpecDecodeLog:
        return "vllm-log";
    case BenchFileKind::PytorchSidecar:
        return "pytorch-sidecar";
    case BenchFileKind::Unknown:
        return "unknown";
    }
    return "unknown";
}

BenchFileKind detectBenchFileKind(const std::filesystem::path& path, std::string_view text)
{
    const auto name = path.filename().string();
    if (endsWith(name, ".pytorch.json")) {
        return BenchFileKind::PytorchSidecar;
    }
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) {
        return BenchFileKind::Unknown;
    }
    const auto head = text.substr(first, 4096);
    if (text[first] == '[' ||
        (text[first] == '{' && (head.find("\"avg_ts\"") != std::string_view::npos ||
                                head.find("\"build_commit\"") != std::string_view::npos))) {
        return BenchFileKind::LlamaBench;
    }
    if (text[first] == '{') {
        return BenchFileKind::VllmResult;
    }
    if (text.find("SpecDecoding metrics:") != std::string_view::npos) {
        return BenchFileKind::SpecDecodeLog;
    }
    const auto lineEnd = text.find('\n', first);
    const auto firstLine =
        text.substr(first, lineEnd == std::string_view::npos ? text.size() : lineEnd - first);
    if (endsWith(name, ".csv") ||
        (firstLine.find(',') != std::string_view::npos && firstLine.front() != '#' &&
         firstLine.find('{') == std::string_view::npos)) {
        return BenchFileKind::Csv;
    }
    if (endsWith(name, ".prom") || firstLine.front() == '#' || text.find("vllm:") != std::string_view::npos) {
        return BenchFileKind::PrometheusText;
    }
    return BenchFileKind::Unknown;
}

BenchImport importBenchFiles(const std::vector<std::filesystem::path>& paths, const RecordTags& tags)
{
    BenchImport all;
    std::optional<PromSnapshot> pendingBefore;
    for (const auto& path : paths) {
        const auto text = readBenchFile(path);
        const auto file = path.string();
        switch (detectBenchFileKind(path, text)) {
        case BenchFileKind::VllmResult:
            all.append(parseVllmResult(text, file, tags));
            break;
        case BenchFileKind::LlamaBench:
            all.append(parseLlamaBench(text, file, tags));
            break;
        case BenchFileKind::Csv:
            all.append(parseBenchCsv(text, file, tags));
            break;
        case BenchFileKind::SpecDecodeLog:
            all.append(parseSpecDecodeLog(text, file, tags).import);
            break;
        case BenchFileKind::PrometheusText: {
            auto snapshot = parsePrometheusText(text, file);
            if (!pendingBefore) {
                pendingBefore = std::move(snapshot);
                break;
            }
            auto delta = diffSpecDecode(*pendingBefore, snapshot);
            BenchImport pair;
            pair.records.push_back(recordFromSpecDecodeDelta(delta, file, tags));
            pair.warnings = std::move(delta.warnings);
            if (!tags.arm) {
                pair.warnings.push_back(
                    {BenchWarningKind::MissingTag, file, 0,
                     "a /metrics pair carries no arm: tag the import with one (--arm NAME, or Arm in the "
                     "Benchmarks tab)"});
            }
            all.append(std::move(pair));
            pendingBefore.reset();
            break;
        }
        case BenchFileKind::PytorchSidecar:
            all.warnings.push_back({BenchWarningKind::SkippedInput, file, 0,
                                    "skipped: a *.pytorch.json sidecar, not a vllm bench serve result"});
            break;
        case BenchFileKind::Unknown:
            throw BenchError(
                file, 0,
                "unknown benchmark format (expected vllm bench serve JSON, llama-bench JSON, CSV, "
                "a /metrics scrape or a vLLM log)");
        }
    }
    if (pendingBefore) {
        throw BenchError(
            pendingBefore->file(), 0,
            "a /metrics scrape needs a partner: give the scrape before the run, then the one after");
    }
    return all;
}

} // namespace spark
