#include "core/util/parallel.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace spark {

unsigned threadLimit()
{
    const char* value = std::getenv("SPARK_THREADS");
    if (value == nullptr || *value == '\0') {
        return 0;
    }
    unsigned limit = 0;
    const char* end = value + std::strlen(value);
    const auto [ptr, ec] = std::from_chars(value, end, limit);
    if (ec != std::errc() || ptr != end || limit == 0) {
        throw std::invalid_argument(std::string("SPARK_THREADS must be a positive integer, not '") + value +
                                    "'");
    }
    return limit;
}

unsigned resolveThreads(int requested)
{
    const unsigned limit = threadLimit();
    if (requested > 0) {
        const auto n = static_cast<unsigned>(requested);
        return limit > 0 ? std::min(n, limit) : n;
    }
    return limit > 0 ? limit : std::max(1u, std::thread::hardware_concurrency());
}

void parallelFor(std::size_t count, std::size_t grain, unsigned threads,
                 const std::function<void(std::size_t, std::size_t)>& body)
{
    if (count == 0) {
        return;
    }
    grain = std::max<std::size_t>(grain, 1);
    const std::size_t chunks = (count + grain - 1) / grain;
    if (const unsigned limit = threadLimit(); limit > 0) {
        threads = std::min(threads, limit);
    }
    const auto workers = static_cast<unsigned>(std::min<std::size_t>(std::max(threads, 1u), chunks));
    if (workers <= 1) {
        body(0, count);
        return;
    }
    // Chunks are handed out dynamically so uneven rows (outliers, NaN scans) do not stall a thread.
    std::atomic<std::size_t> next{0};
    std::exception_ptr failure;
    std::mutex failureMutex;
    auto work = [&] {
        for (;;) {
            const auto chunk = next.fetch_add(1);
            if (chunk >= chunks) {
                return;
            }
            try {
                body(chunk * grain, std::min(count, (chunk + 1) * grain));
            } catch (...) {
                std::lock_guard lock(failureMutex);
                if (!failure) {
                    failure = std::current_exception();
                }
                next = chunks;
            }
        }
    };
    std::vector<std::thread> pool;
    for (unsigned i = 1; i < workers; ++i) {
        pool.emplace_back(work);
    }
    work();
    for (auto& t : pool) {
        t.join();
    }
    if (failure) {
        std::rethrow_exception(failure);
    }
}

} // namespace spark
