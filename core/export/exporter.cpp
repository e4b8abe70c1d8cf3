#include "core/export/exporter.h"

#include "core/export/quantizationconfig.h"
#include "core/io/ioerror.h"
#include "core/io/shardedwriter.h"
#include "core/io/stagingdirectory.h"
#include "core/quant/modulecontexts.h"
#include "core/quant/rowchunks.h"
#include "core/quant/schemecodec.h"
#include "core/util/parallel.h"

#include <map>
#include <set>

namespace spark {
namespace fs = std::filesystem;

namespace {

void copyTensor(const Checkpoint& source, const CheckpointTensor& tensor, ByteSink& sink)
{
    const auto& file = source.fileOf(tensor);
    std::vector<std::byte> buffer(std::min<std::uint64_t>(tensor.info.byteSize(), kChunkBytes));
    for (std::uint64_t offset = 0; offset < tensor.info.byteSize(); offset += buffer.size()) {
        const auto n = std::min<std::uint64_t>(buffer.size(), tensor.info.byteSize() - offset);
        file.read(tensor.info, offset, std::span(buffer.data(), n));
        sink.write(std::span<const std::byte>(buffer.data(), n));
    }
}

const CheckpointTensor& plannedWeight(const Checkpoint& source, const PlannedModule& module)
{
    const auto* tensor = source.find(module.weightTensor);
    if (!tensor) {
        throw ExportError("planned weight '" + module.weightTensor + "' is not in the checkpoint");
    }
    const auto& info = tensor->info;
    if (info.shape.size() != 2 || !isQuantizableFloat(info.dtype)) {
        throw ExportError("'" + info.name + "' is " + std::string(dtypeName(info.dtype)) + " " +
                          info.shapeText() + ": only 2-D BF16, F16 or F32 weights can be quantized");
    }
    return *tensor;
}

void addQuantizedModule(const Checkpoint& source, const PlannedModule& module, const SchemeContext& context,
                        const QuantBackend& backend, unsigned threads, std::vector<PlannedTensor>& out)
{
    const auto& weight = plannedWeight(source, module);
    const auto& info = weight.info;
    const auto& codec = *module.scheme->codec();
    const auto tensors = codec.tensors(info.shape[0], info.shape[1], info.dtype);
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const auto& tensor = tensors[i];
        TensorSpec header{module.name + "." + tensor.suffix, tensor.dtype, tensor.shape};
        if (tensor.rowsPerEntry == 0) {
            out.push_back({std::move(header),
                           [bytes = codec.constantBytes(tensor, info.shape[0], info.shape[1], context)](
                               ByteSink& sink) { sink.write(std::span<const std::byte>(bytes)); }});
            continue;
        }
        // Each tensor streams the weight again in row chunks: memory stays at one chunk per tensor.
        out.push_back(
            {std::move(header), [&source, &weight, &codec, context, &backend, threads, i](ByteSink& sink) {
                 RowChunkReader reader(source, weight, kChunkBytes, codec.rowAlignment());
                 std::vector<std::vector<std::byte>> parts;
                 while (const auto rows = reader.next()) {
                     codec.encodeTensor(*rows, context, i, parts, backend, threads);
                     sink.write(std::span<const std::byte>(parts[i]));
                 }
             }});
    }
}

const CalibratedWeights::Module* calibratedModule(const CalibratedWeights* calibrated,
                                                  const std::string& name)
{
    if (!calibrated) {
        return nullptr;
    }
    const auto it = calibrated->modules.find(name);
    return it == calibrated->modules.end() ? nullptr : &it->second;
}

/// Per quantized module, what its codec needs beyond its rows: the ranges its rounding method searched, and
/// NVFP4's global scale over the module's whole fused set (every module sharing its vLLM name,
/// schemes-spec §3.4.1). The search reads every searched weight once before any byte is written; it
/// reports no bytes written but honours a cancel.
std::map<std::string, SchemeContext> schemeContexts(const Checkpoint& source, const QuantPlan& plan,
                                                    const CalibratedWeights* calibrated, unsigned threads,
                                                    const ProgressFn& progress)
{
    auto quantized = plan.quantizedModules();
    if (calibrated) { // their contexts came with the solved weights
        std::erase_if(quantized,
                      [&](const PlannedModule* m) { return calibratedModule(calibrated, m->name); });
    }
    std::vector<ContextRequest> requests;
    for (const auto* m : quantized) {
        requests.push_back({&plannedWeight(source, *m), m->scheme, m->rounding, m->vllmName});
    }
    const auto contexts = moduleContexts(source, requests, threads, [&](std::uint64_t, std::uint64_t total) {
        return reportProgress(progress, 0, total);
    });
    std::map<std::string, SchemeContext> out;
    for (std::size_t i = 0; i < quantized.size(); ++i) {
        if (!contexts[i].error.empty()) {
            throw ExportError(contexts[i].error);
        }
        out[quantized[i]->name] = contexts[i].context;
    }
    return out;
}

/// Files of the source folder that belong in the output unchanged (tokenizer, generation config, ...).
std::vector<fs::path> companionFiles(const Checkpoint& source, bool replaceReadme)
{
    std::set<fs::path> shardPaths;
    for (const auto& shard : source.shards()) {
        shardPaths.insert(shard->path().filename());
    }
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(source.folder(), ec)) {
        const auto name = entry.path().filename();
        const auto text = name.string();
        if (!fs::is_regular_file(entry.path(), ec) || text.starts_with(".") ||
            entry.path().extension() == ".safetensors" || text == kIndexFileName || text == "config.json" ||
            (replaceReadme && text == "README.md")) {
            continue;
        }
        files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    return files;
}

} // namespace

ExportResult exportCheckpoint(const Checkpoint& source, const QuantPlan& plan, const ExportOptions& options)
{
    if (!plan.errors.empty()) {
        throw ExportError("the plan has errors: " + plan.errors.front());
    }
    const unsigned threads = resolveThreads(static_cast<int>(options.threads));
    const auto cpu = options.backend ? nullptr : makeBackend(Backend::Cpu);
    const QuantBackend& backend = options.backend ? *options.backend : *cpu;
    StagingDirectory staging(options.output, {source.folder()});

    ExportResult result;
    result.bytesBefore = source.totalBytes();
    std::set<std::string> replaced; // source tensors that quantized modules replace
    std::vector<PlannedTensor> tensors;
    const auto contexts = schemeContexts(source, plan, options.calibrated, threads, options.progress);
    for (const auto* module : plan.quantizedModules()) {
        if (const auto* solved = calibratedModule(options.calibrated, module->name)) {
            addQuantizedModule(*solved->file, *module, solved->context, backend, threads, tensors);
        } else {
            addQuantizedModule(source, *module, contexts.at(module->name), backend, threads, tensors);
        }
        replaced.insert(module->weightTensor);
        ++result.quantizedModules;
    }
    for (const auto& tensor : source.tensors()) {
        if (replaced.contains(tensor.info.name)) {
            continue;
        }
        tensors.push_back({{tensor.info.name, tensor.info.dtype, tensor.info.shape},
                           [&source, &tensor](ByteSink& sink) { copyTensor(source, tensor, sink); }});
        ++result.copiedTensors;
    }
    const auto written =
        writeSafetensorsShards(staging.path(), std::move(tensors), {options.maxShardBytes, options.progress});
    result.shardFiles = written.files;
    result.bytesAfter = written.totalSize;

    writeTextFile(staging.path() / "config.json", exportedConfig(source.config(), plan).dump(2) + "\n");
    for (const auto& file : companionFiles(source, !options.modelCard.empty())) {
        std::error_code ec;
        if (!fs::copy_file(file, staging.path() / file.filename(), ec)) {
            throw IoError(IoErrorKind::WriteFailed, file.string(),
                          "cannot copy into the output: " + ec.message());
        }
        result.otherFiles.push_back(file.filename().string());
    }
    if (!options.modelCard.empty()) {
        writeTextFile(staging.path() / "README.md", options.modelCard);
    }
    // One last look at the cancel request: flushing gigabytes takes long enough for a Ctrl-C to arrive.
    staging.commit([&] { return reportProgress(options.progress, result.bytesAfter, result.bytesAfter); });
    return result;
}

} // namespace spark
