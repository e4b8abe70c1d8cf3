#include "progressbar.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <unistd.h>

namespace spark::cli {
namespace {

std::atomic<bool> g_interrupted{false};

// The first Ctrl-C asks the work to stop at its next progress report (which removes its partial
// output); a second one ends the process at once, the default way.
extern "C" void onInterrupt(int signal)
{
    g_interrupted = true;
    static constexpr char kMessage[] = "\nsparkulator-cli: cancelling (Ctrl-C again to quit at once)\n";
    [[maybe_unused]] const auto written = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    std::signal(signal, SIG_DFL);
}

} // namespace

void installInterruptHandler()
{
    std::signal(SIGINT, onInterrupt);
    std::signal(SIGTERM, onInterrupt);
}

bool interrupted()
{
    return g_interrupted;
}

ProgressFn stderrProgress(std::string label)
{
    installInterruptHandler();
    const bool tty = ::isatty(STDERR_FILENO);
    auto lastDraw = std::make_shared<std::chrono::steady_clock::time_point>();
    auto finished = std::make_shared<bool>(false);
    return [label = std::move(label), tty, lastDraw, finished](std::uint64_t done, std::uint64_t total) {
        // Work may report completion more than once (the exporter asks again before its final rename).
        if (tty && !*finished) {
            const auto now = std::chrono::steady_clock::now();
            if (done == total || now - *lastDraw > std::chrono::milliseconds(100)) {
                *lastDraw = now;
                const double fraction = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
                const int filled = static_cast<int>(fraction * 30);
                std::fprintf(stderr, "\r%s [%.*s%*s] %5.1f%%", label.c_str(), filled,
                             "##############################", 30 - filled, "", 100.0 * fraction);
                if (done == total) {
                    std::fputc('\n', stderr);
                    *finished = true;
                }
            }
        }
        return !g_interrupted.load();
    };
}

} // namespace spark::cli
