#pragma once

#include "core/io/tensorinfo.h"
#include "core/plan/sensitivitysweep.h"

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace spark {
class Checkpoint;
} // namespace spark

namespace spark::test {

/// Absolute path of a file under tests/data.
std::filesystem::path dataPath(const std::string& name);

/// An 8-byte little-endian N, then @p header verbatim, then @p dataBytes zero bytes.
std::string safetensorsImage(const std::string& header, std::size_t dataBytes = 0);

/// Writes @p bytes to @p path (creating parent folders).
void writeFile(const std::filesystem::path& path, const std::string& bytes);
std::string readFile(const std::filesystem::path& path);

/// A measured sweep made up: unit u's candidate o streams @p costs[u][o] bytes (checkpoint bytes 7 more) and
/// has rel_err @p errors[u][o]; candidate 0 is BF16, candidate o > 0 the (o − 1)-th scheme of the registry.
/// Fixed costs: 1000 streamed, 5000 on disk.
SweepResult syntheticSweep(const std::vector<std::vector<std::uint64_t>>& costs,
                           const std::vector<std::vector<double>>& errors);

/// Every tensor's info in @p checkpoint's order: what makePlan and prepareSweep take.
std::vector<TensorInfo> infosOf(const Checkpoint& checkpoint);

struct CliResult
{
    int exitCode = -1;
    std::string out;
    std::string err;
};

/// @brief sparkulator-cli started in the background: fork and exec, stdout and stderr read through pipes.
/// The command is SPARK_CLI_PATH, or, when the environment variable SPARK_TEST_EMULATOR is set (e.g.
/// "qemu-aarch64-static", split at spaces), that command with SPARK_CLI_PATH as its first argument: a
/// cross-built test runs under qemu-user, which does not emulate the programs its process starts.
/// Not QProcess: Qt 6 starts children with clone(CLONE_PIDFD), which qemu-user 7.2 refuses.
class CliProcess
{
  public:
    /// Starts the CLI with @p args; @p childSetup (if any) runs in the child just before exec and may
    /// only make async-signal-safe calls (e.g. setrlimit). Throws std::runtime_error when it cannot start.
    explicit CliProcess(const std::vector<std::string>& args, void (*childSetup)() = nullptr);
    ~CliProcess(); ///< kills and reaps a child still running
    CliProcess(const CliProcess&) = delete;
    CliProcess& operator=(const CliProcess&) = delete;

    int pid() const { return pid_; }
    /// True until the child has exited (does not block).
    bool running();
    /// Reads the output until the child exits or @p timeoutMs pass (then the child is killed, exitCode is
    /// -1 and err "timed out"). exitCode is -1 when a signal ended the child.
    CliResult wait(int timeoutMs);

  private:
    int pid_ = -1;
    int outFd_ = -1;
    int errFd_ = -1;
    bool exited_ = false;
    int status_ = 0;
    std::string out_;
    std::string err_;
};

/// Runs sparkulator-cli with @p args and waits (up to @p timeoutMs).
CliResult runCli(const std::vector<std::string>& args, int timeoutMs = 300000);

} // namespace spark::test
