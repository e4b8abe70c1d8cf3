#include "backendargs.h"

#include <iostream>

namespace spark::cli {

OptionTable backendOptionTable()
{
    return {
        {"backend", "auto|cpu|cuda", "auto",
         "where quantization runs (auto: CUDA when a device is present, else the CPU); CUDA serves "
         "the integer schemes W4A16/W8A16, the others run on the CPU"},
        {"cuda-memory", "SIZE", "256MiB", "device memory the CUDA backend may use (at least 16MiB)"},
    };
}

std::unique_ptr<QuantBackend> backendFrom(const Args& args)
{
    const auto requested = parseBackend(args.value("backend", "auto"));
    if (!requested) {
        throw UsageError("--backend must be auto, cpu or cuda");
    }
    BackendOptions options;
    if (const auto memory = args.value("cuda-memory")) {
        options.cudaDeviceMemory = static_cast<std::size_t>(parseByteSize(*memory));
        // A floor well above the engine's 1 MiB per stream: every stream's share then holds blocks of many
        // rows of any draft weight (a row is tens of KiB), with their scales and packed words.
        if (options.cudaDeviceMemory < (std::size_t{16} << 20)) {
            throw UsageError("--cuda-memory must be at least 16MiB");
        }
    }
    std::string notice;
    auto backend = makeBackend(*requested, &notice, options);
    if (!notice.empty()) {
        std::cerr << "sparkulator-cli: " << notice << "\n";
    }
    return backend;
}

void checkBackendServes(const Args& args, const QuantBackend& backend,
                        const std::vector<const WeightScheme*>& schemes)
{
    if (backend.kind() != Backend::Cuda) {
        return;
    }
    std::string lacking;
    for (const auto* s : schemes) {
        if (s->quantizes() && !s->cuda && lacking.find(std::string(s->name)) == std::string::npos) {
            lacking += (lacking.empty() ? "" : ", ") + std::string(s->name);
        }
    }
    if (lacking.empty()) {
        return;
    }
    if (args.value("backend", "auto") == "cuda") {
        throw UsageError("the CUDA backend does not serve " + lacking +
                         " (it serves the W4A16/W8A16 integer schemes): use --backend cpu or auto");
    }
    std::cerr << "sparkulator-cli: " << lacking << " runs on the CPU (the CUDA backend serves W4A16/W8A16)\n";
}

} // namespace spark::cli
