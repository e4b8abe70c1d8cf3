#include "core/audit/quantizedmodule.h"

#include "core/io/floatconv.h"
#include "core/plan/configgroups.h"
#include "core/plan/draftlayout.h"
#include "core/plan/vllmmatching.h"

#include <algorithm>
#include <map>
#include <set>

namespace spark {
namespace {

bool isQuantizedValueDtype(DType dtype)
{
    return dtype == DType::I8 || dtype == DType::F8_E4M3 || dtype == DType::U8 || dtype == DType::I32;
}

std::string suffixOf(const std::string& tensor, const std::string& module)
{
    return tensor.size() > module.size() ? tensor.substr(module.size() + 1) : std::string();
}

/// vLLM's decision for one module, with one packed_modules_mapping.
void decide(const AuditedModule& m, const std::vector<MatchEntry>& ignore,
            const std::vector<ConfigGroup>& groups, const FusedMapping& mapping, bool& ignored, int& group,
            std::string* error)
{
    const auto verdict = shouldIgnoreLayer(m.module.vllmName, ignore, mapping);
    ignored = verdict.ignored;
    if (error && !verdict.error.empty()) {
        *error = verdict.error;
    }
    group = ignored ? -1 : selectConfigGroup(groups, m.module.vllmName, m.module.vllmClass, mapping);
}

} // namespace

const AuditedModule* QuantizedCheckpoint::find(std::string_view moduleName) const
{
    const auto it =
        std::lower_bound(modules.begin(), modules.end(), moduleName,
                         [](const AuditedModule& m, std::string_view n) { return m.module.name < n; });
    return it != modules.end() && it->module.name == moduleName ? &*it : nullptr;
}

const AuditedModule* QuantizedCheckpoint::moduleOfTensorName(const std::string& tensorName) const
{
    return find(moduleOfTensor(tensorName));
}

QuantizedCheckpoint recogniseCheckpoint(const Checkpoint& checkpoint, std::optional<int> targetLayers)
{
    QuantizedCheckpoint view;
    const auto& config = checkpoint.config();
    view.architecture = detectArchitecture(config);
    if (targetLayers) {
        view.targetLayers = std::max(0, *targetLayers);
        view.targetLayersKnown = true;
    } else if (view.architecture.targetLayers && *view.architecture.targetLayers >= 0) {
        view.targetLayers = *view.architecture.targetLayers;
        view.targetLayersKnown = true;
    }
    view.config = locateQuantizationConfig(config);
    view.ctMinorVersion = compressedTensorsMinor(view.config.raw);
    view.configDtype = configWeightDtype(config);

    // Which modules are stored quantized, and a stand-in BF16 weight for each so that describeModules()
    // names and classifies them exactly like the source they came from.
    std::map<std::string, std::vector<const CheckpointTensor*>> byModule;
    for (const auto& t : checkpoint.tensors()) {
        byModule[moduleOfTensor(t.info.name)].push_back(&t);
    }
    std::set<std::string> quantized;
    std::vector<TensorInfo> infos;
    for (const auto& [name, members] : byModule) {
        bool isQuantized = false;
        for (const auto* t : members) {
            const auto suffix = suffixOf(t->info.name, name);
            isQuantized = isQuantized || (isQuantizedTensorSuffix(suffix) && suffix != "input_scale") ||
                          (suffix == "weight" && isQuantizedValueDtype(t->info.dtype));
        }
        if (isQuantized) {
            quantized.insert(name);
        }
        for (const auto* t : members) {
            const auto suffix = suffixOf(t->info.name, name);
            if (!isQuantized || (!isQuantizedTensorSuffix(suffix) && suffix != "weight")) {
                infos.push_back(t->info);
            }
        }
        if (isQuantized) {
            TensorInfo standIn;
            standIn.name = name + ".weight";
            standIn.dtype = DType::BF16;
            standIn.shape = {1, 1};
            infos.push_back(standIn);
        }
    }
    const auto described = describeModules(view.architecture, infos, view.targetLayers);
    const auto ignore = compileEntries(view.config.read.ignore);
    const auto& groups = view.config.read.groups;
    static const FusedMapping kNoMapping;

    for (const auto& d : described) {
        AuditedModule m;
        m.module = d;
        m.quantizedOnDisk = quantized.contains(d.name);
        m.evaluated = (d.role == ModuleRole::Linear || d.role == ModuleRole::Head) &&
                      !d.weightTensor.empty() && (m.quantizedOnDisk || d.outFeatures > 0);
        if (m.evaluated) {
            decide(m, ignore, groups, kNoMapping, m.ignored, m.group, &m.ignoreError);
            decide(m, ignore, groups, standardFusedMapping(), m.ignoredWithMapping, m.groupWithMapping,
                   &m.ignoreError);
            m.shardIgnored = firstMatch(ignore, d.vllmShardName) >= 0;
            m.shardGroup =
                m.shardIgnored ? -1 : selectConfigGroup(groups, d.vllmShardName, d.vllmClass, kNoMapping);
        }
        m.module.bytes = 0;
        for (const auto* t : byModule[d.name]) {
            m.module.bytes += t->info.byteSize();
        }
        if (!m.quantizedOnDisk) {
            m.productScheme = &keepScheme();
            m.scheme = std::string(dtypeName(d.dtype));
            m.weightBytes = d.weightBytes;
            if (d.outFeatures && d.inFeatures) {
                m.bitsPerWeight = static_cast<double>(dtypeBits(d.dtype));
            }
            view.modules.push_back(std::move(m));
            continue;
        }
        // The layout the tensors follow: the group vLLM selects first, then the one compressed-tensors
        // would use for the shard name, then any group.
        std::vector<int> candidates;
        for (const int g : {m.group, m.groupWithMapping, m.shardGroup}) {
            if (g >= 0 && std::find(candidates.begin(), candidates.end(), g) == candidates.end()) {
                candidates.push_back(g);
            }
        }
        for (int g = 0; g < static_cast<int>(view.config.args.size()); ++g) {
            if (std::find(candidates.begin(), candidates.end(), g) == candidates.end()) {
                candidates.push_back(g);
            }
        }
        for (const int g : candidates) {
            if (g >= static_cast<int>(view.config.args.size())) {
                continue;
            }
            auto layout = readStoredLayout(checkpoint, d.name, view.config.args[static_cast<std::size_t>(g)],
                                           view.configDtype, view.ctMinorVersion);
            if (m.layoutGroup < 0 || (layout.issues.empty() && !m.layout.issues.empty())) {
                m.layoutGroup = g;
                m.layout = std::move(layout);
            }
            if (m.layout.issues.empty()) {
                break;
            }
        }
        if (m.layoutGroup >= 0) {
            const auto& args = view.config.args[static_cast<std::size_t>(m.layoutGroup)];
            m.productScheme = m.layout.issues.empty() ? args.scheme : nullptr;
            if (static_cast<std::size_t>(m.layoutGroup) < view.config.read.groups.size()) {
                m.rounding = view.config.read.groups[static_cast<std::size_t>(m.layoutGroup)].rounding;
                m.gptq = view.config.read.groups[static_cast<std::size_t>(m.layoutGroup)].gptq;
            }
            m.scheme = args.describe();
            m.weightBytes = m.layout.storedBytes;
            m.module.dtype = m.layout.weightDtype;
            m.module.outFeatures = m.layout.out;
            m.module.inFeatures = m.layout.in;
            m.module.weightBytes = m.layout.storedBytes;
            if (m.layout.out && m.layout.in) {
                m.bitsPerWeight = static_cast<double>(m.layout.storedBytes) * 8.0 /
                                  (static_cast<double>(m.layout.out) * static_cast<double>(m.layout.in));
            }
        } else {
            m.scheme = "quantized (no config group)";
            for (const auto* t : byModule[d.name]) {
                if (isQuantizedTensorSuffix(suffixOf(t->info.name, d.name)) ||
                    t->info.name == d.name + ".weight") {
                    m.weightBytes += t->info.byteSize();
                }
            }
        }
        view.modules.push_back(std::move(m));
    }
    return view;
}

std::unique_ptr<ModuleDecoder> makeDecoder(const Checkpoint& checkpoint, const QuantizedCheckpoint& view,
                                           const AuditedModule& module)
{
    if (!module.decodable()) {
        return nullptr;
    }
    return std::make_unique<ModuleDecoder>(checkpoint, module.module.name,
                                           view.config.args[static_cast<std::size_t>(module.layoutGroup)],
                                           module.layout);
}

std::vector<float> moduleWeightValues(const Checkpoint& checkpoint, const QuantizedCheckpoint& view,
                                      const AuditedModule& module, std::uint64_t firstRow,
                                      std::size_t rowCount)
{
    const auto cols = static_cast<std::size_t>(module.module.inFeatures);
    if (module.quantizedOnDisk) {
        const auto decoder = makeDecoder(checkpoint, view, module);
        if (!decoder) {
            throw std::invalid_argument(
                module.module.name + ": its tensors do not fit " + module.scheme +
                (module.layout.issues.empty() ? "" : ": " + module.layout.issues.front().message));
        }
        // Start on an aligned row and drop the rows before firstRow.
        const auto aligned = firstRow - firstRow % decoder->rowAlignment();
        const auto lead = static_cast<std::size_t>(firstRow - aligned);
        std::vector<float> values((lead + rowCount) * cols);
        decoder->decode(aligned, lead + rowCount, values.data());
        values.erase(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(lead * cols));
        return values;
    }
    const auto* weight = checkpoint.find(module.module.weightTensor);
    if (!weight || weight->info.shape.size() != 2 || !canConvertToFloat(weight->info.dtype) ||
        firstRow + rowCount > weight->info.shape[0]) {
        throw std::invalid_argument(module.module.name + ": no 2-D floating-point weight to read rows from");
    }
    const auto rowBytes = weight->info.byteSize() / weight->info.shape[0];
    std::vector<std::byte> bytes(static_cast<std::size_t>(rowBytes * rowCount));
    checkpoint.fileOf(*weight).read(weight->info, firstRow * rowBytes, std::span(bytes.data(), bytes.size()));
    std::vector<float> values(rowCount * cols);
    toFloat(weight->info.dtype, bytes.data(), values.size(), values.data());
    return values;
}

} // namespace spark
