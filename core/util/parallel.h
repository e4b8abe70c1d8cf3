#pragma once

#include <cstddef>
#include <functional>

namespace spark {

/// @brief Worker threads to use: @p requested when > 0, else every hardware thread.
unsigned resolveThreads(int requested);

/// @brief Runs body(begin, end) over [0, count) split into contiguous chunks of at least @p grain items
/// on @p threads threads (the caller's thread included). Returns when all chunks are done; the first
/// exception thrown by a chunk is rethrown here.
void parallelFor(std::size_t count, std::size_t grain, unsigned threads,
                 const std::function<void(std::size_t begin, std::size_t end)>& body);

} // namespace spark
