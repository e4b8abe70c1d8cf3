#include "cardargs.h"

#include "core/bench/benchimport.h"
#include "core/bench/benchreport.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace spark::cli {
namespace {

/// The name of the model a checkpoint folder holds: its config.json `_name_or_path`, else the path as
/// given.
std::string modelNameOf(const std::string& folder)
{
    std::ifstream file(std::filesystem::path(folder) / "config.json");
    const auto config = nlohmann::json::parse(file, nullptr, false);
    if (config.is_object() && config.contains("_name_or_path") && config["_name_or_path"].is_string() &&
        !config["_name_or_path"].get<std::string>().empty()) {
        return config["_name_or_path"].get<std::string>();
    }
    return folder;
}

} // namespace

OptionTable cardOptionTable()
{
    return {
        {"model-name", "N", "the output folder's name", "the card's model name"},
        {"base-model", "B", "config.json _name_or_path, else the source folder's name",
         "the BF16 draft the export is made from"},
        {"license", "L", "the source README's license, else other", "the license in the card's front matter"},
        {"target-model", "M", "the verifier the draft's config names",
         "the target model the draft serves (e.g. zai-org/GLM-5.2), or its checkpoint folder: the card then "
         "names the folder's config.json _name_or_path (else the path) and quantize --gptq reads the "
         "tensors the draft shares with it there"},
        {"target-precision", "P", "BF16", "the target precision the draft is paired with"},
        {"bench", "FILE", "", "benchmark results to summarize in the card (repeatable; see report)"},
    };
}

std::string targetModelFolder(const Args& args)
{
    std::string folder;
    for (const auto& value : args.values("target-model")) {
        if (std::filesystem::is_directory(value)) {
            folder = value;
        }
    }
    return folder;
}

CardOptions cardOptionsFrom(const Args& args)
{
    CardOptions options;
    options.modelName = args.value("model-name", "");
    options.baseModel = args.value("base-model", "");
    options.license = args.value("license", "");
    // A name wins over a folder's: while --target-checkpoint stays an alias of --target-model, an old
    // command line may give both the checkpoint folder and the name.
    for (const auto& value : args.values("target-model")) {
        if (!std::filesystem::is_directory(value)) {
            options.targetModel = value;
        }
    }
    if (const auto folder = targetModelFolder(args); options.targetModel.empty() && !folder.empty()) {
        options.targetModel = modelNameOf(folder);
    }
    options.targetPrecision = args.value("target-precision", "BF16");
    const auto benchFiles = args.values("bench");
    if (!benchFiles.empty()) {
        const auto imported =
            importBenchFiles(std::vector<std::filesystem::path>(benchFiles.begin(), benchFiles.end()));
        options.benchmarks = buildBenchReport(imported.records, {}, imported.warnings);
    }
    return options;
}

} // namespace spark::cli
