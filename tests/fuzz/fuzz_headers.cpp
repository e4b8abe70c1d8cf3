// Fuzz target for the two parsers that read untrusted bytes before anything else: the safetensors header
// and model.safetensors.index.json. The first input byte picks the parser. Any outcome other than a
// parsed result or an IoError (a crash, a sanitizer report, another exception type) is a bug.
#include "core/io/checkpoint.h"
#include "core/io/ioerror.h"
#include "core/io/safetensorsheader.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0) {
        return 0;
    }
    const bool index = data[0] & 1;
    const auto* body = reinterpret_cast<const std::byte*>(data + 1);
    try {
        if (index) {
            spark::parseIndexJson(std::string_view(reinterpret_cast<const char*>(body), size - 1),
                                  "fuzz.json");
        } else {
            const auto header = spark::parseSafetensorsImage(std::span(body, size - 1), "fuzz.safetensors");
            // A validated header must describe exactly the image it came from.
            std::uint64_t end = 0;
            for (const auto& t : header.tensors) {
                end = std::max(end, t.end);
            }
            if (header.dataStart() + end != size - 1) {
                __builtin_trap();
            }
        }
    } catch (const spark::IoError&) {
    }
    return 0;
}
