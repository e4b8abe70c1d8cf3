#include "cardargs.h"

#include "core/bench/benchimport.h"
#include "core/bench/benchreport.h"

namespace spark::cli {

const std::vector<std::string>& cardOptionNames()
{
    static const std::vector<std::string> names{"model-name",   "base-model",       "license",
                                                "target-model", "target-precision", "bench"};
    return names;
}

CardOptions cardOptionsFrom(const Args& args)
{
    CardOptions options;
    options.modelName = args.value("model-name", "");
    options.baseModel = args.value("base-model", "");
    options.license = args.value("license", "");
    options.targetModel = args.value("target-model", "");
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
