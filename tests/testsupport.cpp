#include "testsupport.h"

#include "core/io/checkpoint.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace spark::test {

std::filesystem::path dataPath(const std::string& name)
{
    return std::filesystem::path(SPARK_TEST_DATA) / name;
}

std::string safetensorsImage(const std::string& header, std::size_t dataBytes)
{
    std::string image(8, '\0');
    const std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) {
        image[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
    }
    return image + header + std::string(dataBytes, '\0');
}

void writeFile(const std::filesystem::path& path, const std::string& bytes)
{
    if (path.has_parent_path()) {
        std::filesystem::create_directories(path.parent_path());
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string readFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

SweepResult syntheticSweep(const std::vector<std::vector<std::uint64_t>>& costs,
                           const std::vector<std::vector<double>>& errors)
{
    SweepResult s;
    s.measured = true;
    s.streamedFixed = 1000;
    s.bytesFixed = 5000;
    const auto& all = weightSchemes();
    for (std::size_t u = 0; u < costs.size(); ++u) {
        SweepUnit unit;
        unit.name = "model.layers." + std::to_string(u) + ".mlp.down_proj";
        unit.leaf = "down_proj";
        unit.modules = {"layers." + std::to_string(u) + ".mlp.down_proj"};
        for (std::size_t o = 0; o < costs[u].size(); ++o) {
            SweepCandidate c;
            c.scheme = o == 0 ? &keepScheme() : &all[o - 1];
            c.streamedBytes = costs[u][o];
            c.bytes = costs[u][o] + 7;
            c.relErr = errors[u][o];
            unit.candidates.push_back(c);
        }
        s.units.push_back(unit);
    }
    return s;
}

std::vector<TensorInfo> infosOf(const Checkpoint& checkpoint)
{
    std::vector<TensorInfo> infos;
    for (const auto& t : checkpoint.tensors()) {
        infos.push_back(t.info);
    }
    return infos;
}

namespace {

/// The full path of @p program: itself when it names a path, else the first executable of that name on
/// PATH (resolved before fork, so the child only calls execv).
std::string resolveProgram(const std::string& program)
{
    if (program.find('/') != std::string::npos) {
        return program;
    }
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
        if (::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
    }
    throw std::runtime_error("program not found on PATH: " + program);
}

} // namespace

CliProcess::CliProcess(const std::vector<std::string>& args, void (*childSetup)())
{
    std::vector<std::string> command;
    if (const char* emulator = std::getenv("SPARK_TEST_EMULATOR"); emulator != nullptr) {
        std::stringstream words(emulator);
        for (std::string word; words >> word;) {
            command.push_back(word);
        }
    }
    command.push_back(SPARK_CLI_PATH);
    command.insert(command.end(), args.begin(), args.end());
    const std::string program = resolveProgram(command.front());
    std::vector<char*> argv;
    for (auto& word : command) {
        argv.push_back(word.data());
    }
    argv.push_back(nullptr);

    int outPipe[2];
    int errPipe[2];
    if (::pipe2(outPipe, O_CLOEXEC) != 0) {
        throw std::runtime_error("pipe failed");
    }
    if (::pipe2(errPipe, O_CLOEXEC) != 0) {
        ::close(outPipe[0]);
        ::close(outPipe[1]);
        throw std::runtime_error("pipe failed");
    }
    pid_ = ::fork();
    if (pid_ == 0) {
        // The child: only async-signal-safe calls until exec.
        const int devNull = ::open("/dev/null", O_RDONLY);
        if (devNull >= 0) {
            ::dup2(devNull, STDIN_FILENO);
        }
        ::dup2(outPipe[1], STDOUT_FILENO);
        ::dup2(errPipe[1], STDERR_FILENO);
        if (childSetup != nullptr) {
            childSetup();
        }
        ::execv(program.c_str(), argv.data());
        ::_exit(127);
    }
    ::close(outPipe[1]);
    ::close(errPipe[1]);
    outFd_ = outPipe[0];
    errFd_ = errPipe[0];
    if (pid_ < 0) {
        ::close(outFd_);
        ::close(errFd_);
        throw std::runtime_error("fork failed");
    }
}

CliProcess::~CliProcess()
{
    if (pid_ > 0 && running()) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status_, 0);
    }
    for (const int fd : {outFd_, errFd_}) {
        if (fd >= 0) {
            ::close(fd);
        }
    }
}

bool CliProcess::running()
{
    if (!exited_ && ::waitpid(pid_, &status_, WNOHANG) == pid_) {
        exited_ = true;
    }
    return !exited_;
}

CliResult CliProcess::wait(int timeoutMs)
{
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
    const auto msLeft = [&] {
        return static_cast<int>(std::max<std::int64_t>(
            0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count()));
    };
    // Both pipes until end of file (the child and everything it started closed them), then the exit.
    while ((outFd_ >= 0 || errFd_ >= 0) && msLeft() > 0) {
        pollfd fds[2] = {{outFd_, POLLIN, 0}, {errFd_, POLLIN, 0}};
        if (::poll(fds, 2, std::min(msLeft(), 100)) < 0 && errno != EINTR) {
            break;
        }
        for (int i = 0; i < 2; ++i) {
            int& fd = i == 0 ? outFd_ : errFd_;
            if (fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
                continue;
            }
            char buffer[65536];
            const ssize_t got = ::read(fd, buffer, sizeof buffer);
            if (got > 0) {
                (i == 0 ? out_ : err_).append(buffer, static_cast<std::size_t>(got));
            } else if (got == 0 || errno != EINTR) {
                ::close(fd);
                fd = -1;
            }
        }
    }
    while (running() && msLeft() > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CliResult result;
    if (running()) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status_, 0);
        exited_ = true;
        result.err = "timed out";
        return result;
    }
    result.exitCode = WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
    result.out = out_;
    result.err = err_;
    return result;
}

CliResult runCli(const std::vector<std::string>& args, int timeoutMs)
{
    CliProcess process(args);
    return process.wait(timeoutMs);
}

} // namespace spark::test
