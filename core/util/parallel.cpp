#include "core/util/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace spark {

unsigned resolveThreads(int requested)
{
    if (requested > 0) {
        return static_cast<unsigned>(requested);
    }
    return std::max(1u, std::thread::hardware_concurrency());
}

void parallelFor(std::size_t count, std::size_t grain, unsigned threads,
                 const std::function<void(std::size_t, std::size_t)>& body)
{
    if (count == 0) {
        return;
    }
    grain = std::max<std::size_t>(grain, 1);
    const std::size_t chunks = (count + grain - 1) / grain;
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
