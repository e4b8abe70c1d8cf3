// `inspect PATH [--json]`: header-only listing of a checkpoint.
#include "args.h"
#include "command.h"
#include "core/io/checkpoint.h"
#include "core/plan/architecture.h"
#include "core/plan/draftlayout.h"
#include "format.h"

#include <iostream>
#include <map>

namespace spark::cli {

OptionTable inspectOptions()
{
    return {kJsonOption};
}

int runInspect(const std::vector<std::string>& argv)
{
    const Args args(argv, inspectOptions());
    args.expectPositional(1);
    const auto checkpoint = Checkpoint::open(args.positional()[0]);
    const auto arch = detectArchitecture(checkpoint.config());
    const auto totalBytes = checkpoint.totalBytes();

    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> byDtype; // bytes, params
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> byGroup;
    for (const auto& t : checkpoint.tensors()) {
        auto& d = byDtype[std::string(dtypeName(t.info.dtype))];
        d.first += t.info.byteSize();
        d.second += t.info.numel();
        auto& g = byGroup[groupOf(t.info.name)];
        g.first += t.info.byteSize();
        g.second += t.info.numel();
    }

    if (args.flag("json")) {
        nlohmann::ordered_json out;
        out["path"] = checkpoint.folder().string();
        out["architecture"] = arch.id;
        out["architecture_name"] = arch.displayName;
        out["config_architecture"] = arch.configArchitecture;
        out["sharded"] = checkpoint.hasIndex();
        out["files"] = nlohmann::json::array();
        for (const auto& shard : checkpoint.shards()) {
            out["files"].push_back(shard->path().filename().string());
        }
        out["total_bytes"] = totalBytes;
        out["total_params"] = checkpoint.totalParams();
        out["tensors"] = nlohmann::json::array();
        for (const auto& t : checkpoint.tensors()) {
            out["tensors"].push_back({{"name", t.info.name},
                                      {"module", moduleOfTensor(t.info.name)},
                                      {"dtype", dtypeName(t.info.dtype)},
                                      {"shape", t.info.shape},
                                      {"params", t.info.numel()},
                                      {"bytes", t.info.byteSize()},
                                      {"file", checkpoint.fileNameOf(t)}});
        }
        for (const auto& [name, sums] : byDtype) {
            out["by_dtype"][name] = {{"bytes", sums.first}, {"params", sums.second}};
        }
        for (const auto& [name, sums] : byGroup) {
            out["by_group"][name] = {{"bytes", sums.first}, {"params", sums.second}};
        }
        std::cout << out.dump(2) << "\n";
        return kExitOk;
    }

    std::cout << "checkpoint:   " << checkpoint.folder().string() << "\n"
              << "architecture: " << arch.displayName
              << (arch.configArchitecture.empty() ? "" : " (" + arch.configArchitecture + ")") << "\n"
              << "files:        " << checkpoint.shards().size() << (checkpoint.hasIndex() ? " (indexed)" : "")
              << "\n"
              << "tensors:      " << checkpoint.tensors().size() << ", "
              << formatCount(checkpoint.totalParams()) << " params, " << formatBytes(totalBytes) << "\n\n";
    Table table({"name", "dtype", "shape", "params", "bytes", "share", "file"});
    for (const auto& t : checkpoint.tensors()) {
        table.add({t.info.name, std::string(dtypeName(t.info.dtype)), t.info.shapeText(),
                   std::to_string(t.info.numel()), formatBytes(t.info.byteSize()),
                   formatPercent(t.info.byteSize(), totalBytes), checkpoint.fileNameOf(t)});
    }
    table.print(std::cout);
    std::cout << "\nby dtype:\n";
    Table dtypes({"dtype", "params", "bytes", "share"});
    for (const auto& [name, sums] : byDtype) {
        dtypes.add(
            {name, formatCount(sums.second), formatBytes(sums.first), formatPercent(sums.first, totalBytes)});
    }
    dtypes.print(std::cout);
    std::cout << "\nby module group:\n";
    Table groups({"group", "params", "bytes", "share"});
    for (const auto& [name, sums] : byGroup) {
        groups.add(
            {name, formatCount(sums.second), formatBytes(sums.first), formatPercent(sums.first, totalBytes)});
    }
    groups.print(std::cout);
    return kExitOk;
}

} // namespace spark::cli
