#include "core/export/verifier.h"

#include "core/export/rowchunks.h"
#include "core/plan/quantplan.h"
#include "core/plan/vllmmatching.h"
#include "core/quant/quanterror.h"
#include "core/util/parallel.h"

#include <cstring>
#include <map>
#include <set>

namespace spark {
namespace {

/// Collects problems; a check that fails returns false so the caller can skip dependent checks.
class Checker
{
  public:
    explicit Checker(VerifyReport& report) : m_report(report) {}
    bool require(bool condition, const std::string& subject, const std::string& message)
    {
        if (!condition) {
            m_report.problems.push_back({subject, message});
        }
        return condition;
    }

  private:
    VerifyReport& m_report;
};

bool sameBytes(const Checkpoint& a, const CheckpointTensor& ta, const Checkpoint& b,
               const CheckpointTensor& tb)
{
    if (ta.info.byteSize() != tb.info.byteSize()) {
        return false;
    }
    std::vector<std::byte> left(std::min<std::uint64_t>(ta.info.byteSize(), kChunkBytes));
    std::vector<std::byte> right(left.size());
    for (std::uint64_t offset = 0; offset < ta.info.byteSize(); offset += left.size()) {
        const auto n = std::min<std::uint64_t>(left.size(), ta.info.byteSize() - offset);
        a.fileOf(ta).read(ta.info, offset, std::span(left.data(), n));
        b.fileOf(tb).read(tb.info, offset, std::span(right.data(), n));
        if (std::memcmp(left.data(), right.data(), n) != 0) {
            return false;
        }
    }
    return true;
}

/// The scheme written in quantization_config, or nullopt (with problems recorded) when it is unusable.
std::optional<QuantScheme> checkQuantizationConfig(const nlohmann::json& config, Checker& check)
{
    const std::string subject = "config.json";
    if (!check.require(config.contains("quantization_config") && config["quantization_config"].is_object(),
                       subject, "no quantization_config")) {
        return std::nullopt;
    }
    const auto& qc = config["quantization_config"];
    check.require(qc.value("quant_method", "") == "compressed-tensors", subject,
                  "quant_method is not compressed-tensors");
    check.require(qc.value("format", "") == "pack-quantized", subject, "format is not pack-quantized");
    const auto groups = qc.value("config_groups", nlohmann::json::object());
    if (!check.require(groups.size() == 1 && groups.begin()->is_object(), subject,
                       "expected exactly one config group")) {
        return std::nullopt;
    }
    const auto& group = *groups.begin();
    check.require(group.value("input_activations", nlohmann::json()).is_null(), subject,
                  "input_activations must be null for weight-only WNA16");
    const auto weights = group.value("weights", nlohmann::json::object());
    for (const char* forbidden : {"scale_dtype", "zp_dtype"}) {
        check.require(!weights.contains(forbidden), subject,
                      std::string("weights has '") + forbidden +
                          "', which vLLM builds bundling compressed-tensors <= 0.12 reject");
    }
    check.require(weights.value("type", "") == "int" && weights.value("symmetric", false) &&
                      !weights.value("dynamic", true) &&
                      weights.value("actorder", nlohmann::json()).is_null(),
                  subject, "weights must be static symmetric int without actorder");
    QuantScheme scheme;
    scheme.bits = weights.value("num_bits", 0);
    const auto strategy = weights.value("strategy", "");
    if (strategy == "channel") {
        scheme.groupSize = -1;
    } else if (strategy == "group" && weights.contains("group_size") &&
               weights["group_size"].is_number_integer()) {
        scheme.groupSize = weights["group_size"].get<int>();
    } else {
        check.require(false, subject, "strategy must be group (with group_size) or channel");
        return std::nullopt;
    }
    if (!check.require(scheme.isValid(), subject, "unsupported scheme " + scheme.label())) {
        return std::nullopt;
    }
    return scheme;
}

/// Recomputes one quantized module from the source and compares packed words and scales byte for byte.
void checkQuantizedModule(const Checkpoint& source, const Checkpoint& output, const std::string& module,
                          const QuantScheme& scheme, const QuantBackend& backend, unsigned threads,
                          Checker& check, VerifyReport& report)
{
    const auto* weight = source.find(module + ".weight");
    if (!check.require(weight && weight->info.shape.size() == 2 && isQuantizableFloat(weight->info.dtype),
                       module,
                       "weight_packed has no 2-D BF16/F16/F32 source weight '" + module + ".weight'")) {
        return;
    }
    const auto rows = weight->info.shape[0];
    const auto cols = weight->info.shape[1];
    const auto* packed = output.find(module + ".weight_packed");
    const auto* scales = output.find(module + ".weight_scale");
    const auto* shape = output.find(module + ".weight_shape");
    bool ok = check.require(packed->info.dtype == DType::I32 &&
                                packed->info.shape ==
                                    std::vector<std::uint64_t>{rows, scheme.packedWordsPerRow(cols)},
                            module,
                            "weight_packed must be I32 [" + std::to_string(rows) + ", " +
                                std::to_string(scheme.packedWordsPerRow(cols)) + "]");
    ok &= check.require(scales && scales->info.dtype == weight->info.dtype &&
                            scales->info.shape == std::vector<std::uint64_t>{rows, scheme.groupsPerRow(cols)},
                        module,
                        "weight_scale missing or not " + std::string(dtypeName(weight->info.dtype)) + " [" +
                            std::to_string(rows) + ", " + std::to_string(scheme.groupsPerRow(cols)) + "]");
    if (check.require(shape && shape->info.dtype == DType::I64 &&
                          shape->info.shape == std::vector<std::uint64_t>{2},
                      module, "weight_shape missing or not I64 [2]")) {
        std::int64_t values[2];
        std::memcpy(values, output.bytes(*shape).data(), sizeof values);
        ok &= check.require(
            values[0] == static_cast<std::int64_t>(rows) && values[1] == static_cast<std::int64_t>(cols),
            module, "weight_shape is not [" + std::to_string(rows) + ", " + std::to_string(cols) + "]");
    } else {
        ok = false;
    }
    for (const char* leftover : {".weight", ".weight_zero_point", ".weight_g_idx"}) {
        ok &= check.require(!output.find(module + leftover), module,
                            std::string("a quantized module must not keep '") + leftover + "'");
    }
    if (!ok) {
        return;
    }

    RowChunkReader reader(source, *weight);
    const std::size_t wordsPerRow = scheme.packedWordsPerRow(cols);
    const std::size_t scaleRowBytes = scheme.groupsPerRow(cols) * reader.elementBytes();
    std::vector<std::int32_t> expectedPacked(reader.maxRows() * wordsPerRow);
    std::vector<std::byte> expectedScales(reader.maxRows() * scaleRowBytes);
    std::vector<std::byte> actual(std::max(expectedPacked.size() * 4, expectedScales.size()));
    try {
        while (const auto block = reader.next()) {
            backend.quantizeBlock(*block, scheme, expectedScales.data(), expectedPacked.data(), threads);
            const auto packedBytes = block->rowCount * wordsPerRow * 4;
            output.fileOf(*packed).read(packed->info, block->firstRow * wordsPerRow * 4,
                                        std::span(actual.data(), packedBytes));
            if (std::memcmp(actual.data(), expectedPacked.data(), packedBytes) != 0) {
                check.require(false, module,
                              "weight_packed differs from a fresh quantization of the source (rows from " +
                                  std::to_string(block->firstRow) + ")");
                return;
            }
            const auto scaleBytes = block->rowCount * scaleRowBytes;
            output.fileOf(*scales).read(scales->info, block->firstRow * scaleRowBytes,
                                        std::span(actual.data(), scaleBytes));
            if (std::memcmp(actual.data(), expectedScales.data(), scaleBytes) != 0) {
                check.require(false, module,
                              "weight_scale differs from a fresh quantization of the source (rows from " +
                                  std::to_string(block->firstRow) + ")");
                return;
            }
        }
    } catch (const QuantError& e) {
        check.require(false, module, e.what());
        return;
    }
    ++report.bitExactModules;
}

/// vLLM's view: the ignore list must select exactly the Linears left BF16, and fused groups must agree.
void checkIgnoreList(const Checkpoint& source, const Checkpoint& output, const QuantScheme& scheme,
                     const VerifyOptions& options, Checker& check)
{
    PlanOptions planOptions;
    planOptions.preset = "none";
    planOptions.bits = scheme.bits;
    planOptions.groupSize = scheme.groupSize;
    planOptions.targetLayers = options.targetLayers;
    std::vector<TensorInfo> infos;
    for (const auto& t : source.tensors()) {
        infos.push_back(t.info);
    }
    const auto plan = makePlan(source.config(), infos, planOptions);
    const auto ignore = output.config()["quantization_config"].value("ignore", std::vector<std::string>{});

    std::vector<std::string> layers;
    std::map<std::string, std::vector<const PlannedModule*>> byVllmName;
    for (const auto& module : plan.modules) {
        const bool quantized = output.find(module.name + ".weight_packed") != nullptr;
        if (!module.isLinear()) {
            check.require(!quantized, module.name,
                          "quantized, but vLLM loads it as " + module.vllmClass +
                              ", which cannot run quantized");
            continue;
        }
        if (byVllmName[module.vllmName].empty()) {
            layers.push_back(module.vllmName);
        }
        byVllmName[module.vllmName].push_back(&module);
    }
    for (const auto* mapping : {&standardFusedMapping(), static_cast<const FusedMapping*>(nullptr)}) {
        const auto evaluation = evaluateIgnoreList(ignore, layers, mapping ? *mapping : FusedMapping{});
        for (const auto& invalid : evaluation.invalidEntries) {
            check.require(false, "config.json", "ignore entry does not compile: " + invalid);
        }
        for (const auto& verdict : evaluation.layers) {
            if (!check.require(verdict.error.empty(), verdict.layer, verdict.error)) {
                continue;
            }
            for (const auto* module : byVllmName[verdict.layer]) {
                const bool quantized = output.find(module->name + ".weight_packed") != nullptr;
                check.require(
                    verdict.ignored != quantized, module->name,
                    std::string(quantized ? "quantized, but the ignore list makes vLLM expect a BF16 .weight"
                                          : "left BF16, but no ignore entry matches its vLLM name") +
                        " '" + verdict.layer + "'" + (mapping ? "" : " (empty packed_modules_mapping)"));
            }
        }
        if (!evaluation.invalidEntries.empty()) {
            break;
        }
    }
    for (const auto& [name, modules] : byVllmName) {
        std::set<bool> states;
        for (const auto* m : modules) {
            states.insert(output.find(m->name + ".weight_packed") != nullptr);
        }
        check.require(states.size() == 1, name, "fused group is split: some shards quantized, others not");
    }
}

} // namespace

std::string VerifyReport::summary() const
{
    return "verify: " + std::to_string(bitExactModules) + " modules bit-exact, " +
           std::to_string(copiedTensors) + " tensors copied, " + std::to_string(problems.size()) +
           " problems";
}

VerifyReport verifyExport(const Checkpoint& source, const Checkpoint& output, const VerifyOptions& options)
{
    VerifyReport report;
    Checker check(report);
    const unsigned threads = resolveThreads(static_cast<int>(options.threads));
    const auto cpu = options.backend ? nullptr : makeBackend(Backend::Cpu);
    const QuantBackend& backend = options.backend ? *options.backend : *cpu;

    for (const auto& shard : output.shards()) {
        const auto& metadata = shard->header().metadata;
        const auto format = metadata.find("format");
        check.require(format != metadata.end() && format->second == "pt", shard->path().filename().string(),
                      "__metadata__.format must be \"pt\"");
    }
    if (output.hasIndex()) {
        const auto index = readJsonFile(output.folder() / std::string(kIndexFileName));
        const auto total =
            index.value("metadata", nlohmann::json::object()).value("total_size", std::uint64_t{0});
        check.require(total == output.totalBytes(), std::string(kIndexFileName),
                      "total_size " + std::to_string(total) + " != sum of tensor bytes " +
                          std::to_string(output.totalBytes()));
    }
    const auto scheme = checkQuantizationConfig(output.config(), check);

    std::set<std::string> accounted;
    std::set<std::string> replacedSource;
    std::uint64_t done = 0;
    const std::uint64_t total = source.totalBytes();
    for (const auto& tensor : output.tensors()) {
        const auto& name = tensor.info.name;
        if (!name.ends_with(".weight_packed")) {
            continue;
        }
        const auto module = name.substr(0, name.size() - std::string_view(".weight_packed").size());
        accounted.insert({name, module + ".weight_scale", module + ".weight_shape"});
        replacedSource.insert(module + ".weight");
        if (scheme) {
            checkQuantizedModule(source, output, module, *scheme, backend, threads, check, report);
        }
        if (const auto* w = source.find(module + ".weight")) {
            done += w->info.byteSize();
        }
        if (!reportProgress(options.progress, done, total)) {
            return report;
        }
    }
    for (const auto& tensor : source.tensors()) {
        if (replacedSource.contains(tensor.info.name)) {
            continue;
        }
        const auto* copy = output.find(tensor.info.name);
        accounted.insert(tensor.info.name);
        if (check.require(copy != nullptr, tensor.info.name, "missing from the output") &&
            check.require(copy->info.dtype == tensor.info.dtype && copy->info.shape == tensor.info.shape &&
                              sameBytes(source, tensor, output, *copy),
                          tensor.info.name, "not byte-identical to the source")) {
            ++report.copiedTensors;
        }
        done += tensor.info.byteSize();
        if (!reportProgress(options.progress, done, total)) {
            return report;
        }
    }
    for (const auto& tensor : output.tensors()) {
        check.require(accounted.contains(tensor.info.name), tensor.info.name,
                      "unexpected tensor in the output");
    }
    if (scheme) {
        checkIgnoreList(source, output, *scheme, options, check);
    }
    return report;
}

} // namespace spark
