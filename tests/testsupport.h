#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace spark::test {

/// Absolute path of a file under tests/data.
std::filesystem::path dataPath(const std::string& name);

/// An 8-byte little-endian N, then @p header verbatim, then @p dataBytes zero bytes.
std::string safetensorsImage(const std::string& header, std::size_t dataBytes = 0);

/// Writes @p bytes to @p path (creating parent folders).
void writeFile(const std::filesystem::path& path, const std::string& bytes);
std::string readFile(const std::filesystem::path& path);

struct CliResult
{
    int exitCode = -1;
    std::string out;
    std::string err;
};

/// Runs sparkulator-cli with @p args and waits (up to @p timeoutMs).
CliResult runCli(const std::vector<std::string>& args, int timeoutMs = 300000);

} // namespace spark::test
