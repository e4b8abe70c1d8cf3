// Fuzz target for the capture readers (core/forward/capturesource.h): the first input byte picks the layout
// (0 the product's file, 1 a speculators hs_* folder with its capture.json, 2 a vLLM connector folder read
// with the draft's ids and a prompt length: the rest is the safetensors file; 3 a DeepSpec cache with a fixed
// manifest of one sample: the next 56 bytes are samples.idx, the rest the shard). Every sample is then read
// whole and health-checked. Any outcome other than a read capture, a ForwardInputError or an IoError (a
// crash, a sanitizer report, another exception type) is a bug.
#include "core/forward/capturehealth.h"
#include "core/forward/draftspec.h"
#include "core/io/ioerror.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, const std::uint8_t* data, std::size_t size)
{
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0) {
        return 0;
    }
    static const fs::path folder =
        fs::temp_directory_path() / ("spark-fuzz-capture-" + std::to_string(::getpid()));
    fs::remove_all(folder);
    fs::create_directories(folder);
    const int reader = data[0] % 4;
    spark::CaptureReadOptions options;
    fs::path path = folder;
    if (reader == 0) {
        path = folder / "capture.safetensors";
        write(path, data + 1, size - 1);
    } else if (reader == 1) {
        write(folder / "hs_0.safetensors", data + 1, size - 1);
        std::ofstream(folder / "capture.json") << R"({"layer_ids": [1, 3, 5, 6], "skip_tokens": 1})";
    } else if (reader == 3) {
        const std::size_t index = std::min<std::size_t>(size - 1, 56);
        write(folder / "samples.idx", data + 1, index);
        write(folder / "shard-00000.bin", data + 1 + index, size - 1 - index);
        std::ofstream(folder / "manifest.json")
            << R"({"version": 2, "num_samples": 1, "num_shards": 1, "target_layer_ids": [0, 2, 4],)"
            << R"( "hidden_dtype": "bfloat16", "token_dtype": "int32", "mask_dtype": "uint8",)"
            << R"( "index_record_size": 56, "hidden_size": 256,)"
            << R"( "shards": [{"shard_id": 0, "file_name": "shard-00000.bin"}]})";
    } else {
        write(folder / "cmpl-0-0.safetensors", data + 1, size - 1);
        options.promptTokens = 1;
        options.draftLayerIds = {1, 3, 5};
        options.targetLayers = 6;
    }
    try {
        const auto capture = spark::HiddenStateCapture::open(path, options);
        std::vector<int> slots(capture.info().layerIds.size());
        std::iota(slots.begin(), slots.end(), 0);
        for (std::int64_t s = 0; s < capture.sampleCount(); ++s) {
            const auto seq = capture.sequence(s);
            capture.hidden(s, slots, capture.sampleLength(s));
        }
        spark::checkCaptureHealth(capture);
    } catch (const spark::ForwardInputError&) {
    } catch (const spark::IoError&) {
    }
    return 0;
}
