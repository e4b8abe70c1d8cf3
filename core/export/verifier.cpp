#include "core/export/verifier.h"

#include "core/audit/reencodecheck.h"
#include "core/plan/configreader.h"
#include "core/plan/quantplan.h"
#include "core/plan/vllmmatching.h"
#include "core/quant/modulecontexts.h"
#include "core/quant/quanterror.h"
#include "core/quant/rowchunks.h"
#include "core/quant/schemecodec.h"
#include "core/util/parallel.h"

#include <algorithm>
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

/// A quantized module of the output: its source weight, the scheme vLLM selects for it and its set's context.
struct QuantizedModule
{
    const PlannedModule* module = nullptr;
    const CheckpointTensor* weight = nullptr;
    const WeightScheme* scheme = nullptr;
    const RoundingMethod* rounding = nullptr; ///< the method the config group's observer records
    bool gptq = false;                        ///< codes solved from a capture: only the scales recompute
    SchemeContext context;
    bool contextFailed = false; ///< the search or absmax met a NaN/Inf (reported already)
};

/// True when the output holds a quantized form of @p module (every scheme writes a weight_scale).
bool isQuantizedIn(const Checkpoint& output, const DraftModule& module)
{
    return output.find(module.name + ".weight_scale") || output.find(module.name + ".weight_packed");
}

/// vLLM's view of one module: ignored (BF16), or the config group it selects (nullptr after a problem).
const ConfigGroup* selectedGroup(const ReadQuantConfig& config, const std::vector<MatchEntry>& ignore,
                                 const PlannedModule& module, Checker& check)
{
    static const FusedMapping empty;
    const ConfigGroup* first = nullptr;
    for (const FusedMapping* mapping : {&empty, &standardFusedMapping()}) {
        if (shouldIgnoreLayer(module.vllmName, ignore, *mapping).ignored) {
            check.require(false, module.name,
                          "quantized, but the ignore list makes vLLM expect a BF16 .weight '" +
                              module.vllmName + "'");
            return nullptr;
        }
        const int g = selectConfigGroup(config.groups, module.vllmName, module.vllmClass, *mapping);
        const auto* group = g < 0 ? nullptr : &config.groups[static_cast<std::size_t>(g)];
        const auto* scheme = group ? group->scheme : nullptr;
        if (!check.require(scheme != nullptr, module.name,
                           "quantized, but no config group with a supported scheme selects its vLLM name '" +
                               module.vllmName + "'" +
                               (mapping == &empty ? "" : " (with packed_modules_mapping)"))) {
            return nullptr;
        }
        if (first && first != group) {
            check.require(false, module.name,
                          "vLLM selects " + std::string(first->scheme->name) +
                              " without packed_modules_mapping but " + std::string(scheme->name) +
                              " with it (another config group)");
            return nullptr;
        }
        first = group;
    }
    return first;
}

/// Exactly the scheme's tensors, with their dtypes and shapes, and nothing left of the BF16 weight.
bool checkModuleTensors(const Checkpoint& output, const QuantizedModule& q, Checker& check)
{
    const auto& info = q.weight->info;
    bool ok = true;
    const auto tensors = q.scheme->codec()->tensors(info.shape[0], info.shape[1], info.dtype);
    for (const auto& t : tensors) {
        const auto* written = output.find(q.module->name + "." + t.suffix);
        std::string expected = std::string(dtypeName(t.dtype)) + " [";
        for (std::size_t i = 0; i < t.shape.size(); ++i) {
            expected += (i ? ", " : "") + std::to_string(t.shape[i]);
        }
        ok &= check.require(written && written->info.dtype == t.dtype && written->info.shape == t.shape,
                            q.module->name,
                            std::string(q.scheme->name) + " needs " + t.suffix + " " + expected + "]" +
                                (written ? ", found " + std::string(dtypeName(written->info.dtype)) + " " +
                                               written->info.shapeText()
                                         : ", missing"));
    }
    for (const char* leftover : {"weight", "weight_zero_point", "weight_g_idx", "weight_global_scale",
                                 "weight_packed", "weight_shape", "input_scale"}) {
        const bool expected = std::any_of(tensors.begin(), tensors.end(),
                                          [&](const EncodedTensor& t) { return t.suffix == leftover; });
        if (!expected) {
            ok &= check.require(!output.find(q.module->name + "." + leftover), q.module->name,
                                std::string(q.scheme->name) + " must not write '" + leftover + "'");
        }
    }
    return ok;
}

/// Recomputes one quantized module from the source and compares every tensor byte for byte.
void checkQuantizedModule(const Checkpoint& source, const Checkpoint& output, const QuantizedModule& q,
                          const QuantBackend& backend, unsigned threads, Checker& check, VerifyReport& report)
{
    if (!checkModuleTensors(output, q, check)) {
        return;
    }
    ReencodeCheck exact(output, q.module->name, *q.scheme, *q.rounding, q.weight->info, q.context, q.gptq);
    RowChunkReader reader(source, *q.weight, kChunkBytes, q.scheme->codec()->rowAlignment());
    while (exact.matching()) {
        const auto block = reader.next();
        if (!block) {
            break;
        }
        exact.block(*block, backend, threads);
    }
    if (check.require(exact.matching(), q.module->name, exact.problem())) {
        ++(q.gptq                       ? report.gptqModules
           : q.rounding->needsHessian() ? report.capturedScaleModules
                                        : report.bitExactModules);
    }
}

/// The modules of @p plan quantized in @p output with their schemes; NVFP4 contexts from each fused set.
std::vector<QuantizedModule> quantizedModules(const Checkpoint& source, const Checkpoint& output,
                                              const QuantPlan& plan, const ReadQuantConfig& config,
                                              unsigned threads, Checker& check)
{
    const auto ignore = compileEntries(config.ignore);
    std::vector<QuantizedModule> out;
    for (const auto& module : plan.modules) {
        if (!isQuantizedIn(output, module)) {
            continue;
        }
        const bool head = module.vllmName == "lm_head" && plan.architecture.traits().quantizableHead;
        if (!check.require(module.isLinear() || head, module.name,
                           "quantized, but vLLM loads it as " + module.vllmClass +
                               ", which cannot run quantized")) {
            continue;
        }
        const auto* weight = source.find(module.weightTensor);
        if (!check.require(weight && weight->info.shape.size() == 2 && isQuantizableFloat(weight->info.dtype),
                           module.name, "no 2-D BF16/F16/F32 source weight '" + module.weightTensor + "'")) {
            continue;
        }
        const auto* group = selectedGroup(config, ignore, module, check);
        if (!group) {
            continue;
        }
        if (!check.require(group->rounding != nullptr, module.name,
                           "its config group's weights.observer/observer_kwargs record no rounding method "
                           "Sparkulator recomputes (" +
                               roundingMethodNames() + ")")) {
            continue;
        }
        out.push_back({&module, weight, group->scheme, group->rounding, group->gptq, {}, false});
    }
    // The searched ranges and NVFP4's global scale per fused set, exactly as the exporter computes them.
    std::vector<ContextRequest> requests;
    for (const auto& q : out) {
        // A capture chose the scales of a hessian module: they are matched to its candidates instead.
        const auto* scale =
            q.rounding->needsHessian() ? output.find(q.module->name + ".weight_scale") : nullptr;
        requests.push_back({q.weight, q.scheme, q.rounding, q.module->vllmName, &output, scale});
    }
    const auto contexts = moduleContexts(source, requests, threads);
    for (std::size_t i = 0; i < out.size(); ++i) {
        out[i].context = contexts[i].context;
        out[i].contextFailed = !contexts[i].error.empty();
        check.require(contexts[i].error.empty(), out[i].module->name, contexts[i].error);
    }
    return out;
}

/// vLLM's view: the ignore list must select exactly the Linears left BF16, and fused groups must agree.
void checkIgnoreList(const Checkpoint& output, const QuantPlan& plan, const ReadQuantConfig& config,
                     Checker& check)
{
    std::vector<std::string> layers;
    std::map<std::string, std::vector<const PlannedModule*>> byVllmName;
    for (const auto& module : plan.modules) {
        if (!module.isLinear()) {
            continue;
        }
        if (byVllmName[module.vllmName].empty()) {
            layers.push_back(module.vllmName);
        }
        byVllmName[module.vllmName].push_back(&module);
    }
    for (const auto* mapping : {&standardFusedMapping(), static_cast<const FusedMapping*>(nullptr)}) {
        const auto evaluation =
            evaluateIgnoreList(config.ignore, layers, mapping ? *mapping : FusedMapping{});
        for (const auto& invalid : evaluation.invalidEntries) {
            check.require(false, "config.json", "ignore entry does not compile: " + invalid);
        }
        for (const auto& verdict : evaluation.layers) {
            if (!check.require(verdict.error.empty(), verdict.layer, verdict.error)) {
                continue;
            }
            for (const auto* module : byVllmName[verdict.layer]) {
                if (!isQuantizedIn(output, *module)) {
                    check.require(verdict.ignored, module->name,
                                  "left BF16, but no ignore entry matches its vLLM name '" + verdict.layer +
                                      "'" + (mapping ? "" : " (empty packed_modules_mapping)"));
                }
            }
        }
        if (!evaluation.invalidEntries.empty()) {
            break;
        }
    }
    for (const auto& [name, modules] : byVllmName) {
        std::set<bool> states;
        for (const auto* m : modules) {
            states.insert(isQuantizedIn(output, *m));
        }
        check.require(states.size() == 1, name, "fused group is split: some shards quantized, others not");
    }
}

} // namespace

std::string VerifyReport::summary() const
{
    return "verify: " + std::to_string(bitExactModules) + " modules bit-exact, " +
           (gptqModules ? std::to_string(gptqModules) + " GPTQ modules with bit-exact scales, " : "") +
           (capturedScaleModules ? std::to_string(capturedScaleModules) +
                                       " modules with capture-chosen scales (each a candidate of its search) "
                                       "and bit-exact codes, "
                                 : "") +
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
    const auto config = readQuantizationConfig(output.config());
    for (const auto& problem : config.problems) {
        check.require(false, "config.json", problem);
    }
    PlanOptions planOptions;
    planOptions.preset = "none";
    planOptions.targetLayers = options.targetLayers;
    const auto plan = makePlan(source.config(), source.tensorInfos(), planOptions);
    const auto modules = quantizedModules(source, output, plan, config, threads, check);

    std::set<std::string> accounted;
    std::set<std::string> replacedSource;
    std::uint64_t done = 0;
    const std::uint64_t total = source.totalBytes();
    for (const auto& q : modules) {
        for (const auto& t : q.scheme->codec()->tensors(q.weight->info.shape[0], q.weight->info.shape[1],
                                                        q.weight->info.dtype)) {
            accounted.insert(q.module->name + "." + t.suffix);
        }
        replacedSource.insert(q.module->weightTensor);
        if (!q.contextFailed) {
            checkQuantizedModule(source, output, q, backend, threads, check, report);
        }
        done += q.weight->info.byteSize();
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
            check.require(sameTensor(source, tensor, output, *copy), tensor.info.name,
                          "not byte-identical to the source")) {
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
    if (config.problems.empty() || !config.groups.empty()) {
        checkIgnoreList(output, plan, config, check);
    }
    return report;
}

} // namespace spark
