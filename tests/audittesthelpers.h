#pragma once
// Helpers shared by tst_audit_*.cpp (header-only; each test is its own executable): export a tiny demo
// draft with the real exporter, then load, edit and rewrite the result to make broken checkpoints.

#include "core/demo/demodraft.h"
#include "core/export/exporter.h"
#include "core/io/checkpoint.h"
#include "core/io/shardedwriter.h"
#include "core/plan/quantplan.h"
#include "testsupport.h"

#include <QTest>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace spark::test {

/// Writes the tiny demo of @p arch into @p dir/source (once) and returns its path.
inline std::filesystem::path demoSource(const std::filesystem::path& dir, const std::string& arch)
{
    const auto path = dir / ("source-" + arch);
    if (!std::filesystem::exists(path)) {
        writeDemoDraft(describeDemoDraft(arch, DemoScale::Tiny), path, {});
    }
    return path;
}

/// Plans and exports the demo of @p arch with scheme rules @p rules into @p dir/@p name; an empty string
/// when the plan has errors (QVERIFY the result).
inline std::filesystem::path exportDemo(const std::filesystem::path& dir, const std::string& arch,
                                        const std::vector<std::string>& rules, const std::string& name,
                                        std::string* error = nullptr)
{
    const auto source = Checkpoint::open(demoSource(dir, arch));
    PlanOptions options;
    options.schemes = rules;
    const auto plan = makePlan(source.config(), infosOf(source), options);
    if (!plan.errors.empty()) {
        if (error) {
            *error = plan.errors.front();
        }
        return {};
    }
    const auto out = dir / name;
    ExportOptions exportOptions;
    exportOptions.output = out;
    exportCheckpoint(source, plan, exportOptions);
    return out;
}

/// A checkpoint held in memory (tiny demos only) so a test can break it and write it back.
struct EditableCheckpoint
{
    nlohmann::json config;
    std::map<std::string, std::pair<TensorSpec, std::vector<std::byte>>> tensors;

    static EditableCheckpoint load(const std::filesystem::path& path)
    {
        const auto checkpoint = Checkpoint::open(path);
        EditableCheckpoint e;
        e.config = checkpoint.config();
        for (const auto& t : checkpoint.tensors()) {
            const auto bytes = checkpoint.bytes(t);
            e.tensors[t.info.name] = {TensorSpec{t.info.name, t.info.dtype, t.info.shape},
                                      std::vector<std::byte>(bytes.begin(), bytes.end())};
        }
        return e;
    }

    void set(const std::string& name, DType dtype, std::vector<std::uint64_t> shape,
             std::vector<std::byte> bytes)
    {
        tensors[name] = {TensorSpec{name, dtype, std::move(shape)}, std::move(bytes)};
    }

    /// Writes the tensors and config.json into a new folder @p path. A speculators config keeps its copy
    /// inside transformer_layer_config equal to the (edited) top-level one, as the exporter writes them.
    void write(const std::filesystem::path& path)
    {
        if (config.contains("transformer_layer_config") &&
            config["transformer_layer_config"].contains("quantization_config") &&
            config.contains("quantization_config")) {
            config["transformer_layer_config"]["quantization_config"] = config["quantization_config"];
        }
        std::filesystem::create_directories(path);
        std::vector<PlannedTensor> planned;
        for (const auto& [name, entry] : tensors) {
            const auto* bytes = &entry.second;
            planned.push_back({entry.first, [bytes](ByteSink& sink) { sink.write(std::span(*bytes)); }});
        }
        writeSafetensorsShards(path, std::move(planned));
        std::ofstream(path / "config.json") << config.dump(2);
    }

    nlohmann::json& quantizationConfig() { return config["quantization_config"]; }
};

} // namespace spark::test
