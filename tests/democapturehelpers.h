#pragma once

// A tiny demo draft with a synthetic capture of its own greedy tokens, for the tests of what runs the
// draft's forward over a capture (GPTQ's Hessians, the GPTQ export).
#include "core/demo/democapture.h"
#include "core/demo/demodraft.h"

#include <filesystem>
#include <string>

namespace spark::test {

struct DemoWithCapture
{
    std::filesystem::path draft;
    std::filesystem::path capture; ///< its hidden_states.safetensors
    std::filesystem::path target;  ///< the target's shared tensors; empty when the draft ships them all
};

/// Writes draft @p arch to root/arch and its capture (@p samples sequences of @p length tokens, the first
/// @p prompt of them the prompt) to root/arch-capture. Small sizes keep the emulated aarch64 runs short.
inline DemoWithCapture writeDemoWithCapture(const std::filesystem::path& root, const std::string& arch,
                                            std::uint64_t seed, std::int64_t samples, std::int64_t length,
                                            std::int64_t prompt)
{
    const auto draft = describeDemoDraft(arch, DemoScale::Tiny);
    const auto folder = root / (arch + "-capture");
    DemoWithCapture d{root / arch, folder / "hidden_states.safetensors", {}};
    writeDemoDraft(draft, d.draft, {.seed = seed, .threads = 2});
    DemoCaptureOptions options;
    options.samples = samples;
    options.length = length;
    options.prompt = prompt;
    options.threads = 2;
    writeDemoCapture(draft, d.draft, folder, options);
    if (describeDemoTarget(draft)) {
        d.target = folder / "target";
    }
    return d;
}

} // namespace spark::test
