#pragma once
// Helpers shared by the golden tests, tst_quantgolden.cpp and tst_schemegolden.cpp (header-only; each test
// is its own executable): both compare against a folder under tests/data that the real compressed-tensors
// code wrote, with the numbers it measured in expected.json.

#include "core/io/safetensorsfile.h"
#include "testsupport.h"

#include <cstddef>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace spark::test {

/// expected.json of the golden folder @p folder under tests/data.
inline nlohmann::json expectedJson(const std::string& folder)
{
    std::ifstream in(dataPath(folder + "/expected.json"));
    return nlohmann::json::parse(in);
}

/// A copy of tensor @p name's bytes in @p file; empty when the file lacks it, so that the byte comparison
/// fails rather than the test crashing.
inline std::vector<std::byte> bytesOf(const SafetensorsFile& file, const std::string& name)
{
    const auto* info = file.find(name);
    if (!info) {
        return {};
    }
    const auto span = file.bytes(*info);
    return {span.begin(), span.end()};
}

} // namespace spark::test
