#pragma once

#include <cstddef>
#include <functional>

namespace spark {

/// @brief The thread limit from the environment variable SPARK_THREADS (a positive integer), or 0 when it
/// is unset or empty. With SPARK_THREADS=N no parallel section of the core runs on more than N threads
/// (the caller's included): N=1 starts no thread at all (e.g. for emulators such as qemu-user).
/// Throws std::invalid_argument when the variable is set to anything but a positive integer.
unsigned threadLimit();

/// @brief Worker threads to use: @p requested when > 0, else every hardware thread; either way at most
/// threadLimit() when SPARK_THREADS is set.
unsigned resolveThreads(int requested);

/// @brief Runs body(begin, end) over [0, count) split into contiguous chunks of at least @p grain items
/// on @p threads threads (the caller's thread included; capped by threadLimit()). Returns when all chunks
/// are done; the first exception thrown by a chunk is rethrown here. This is the only place the core
/// starts threads.
void parallelFor(std::size_t count, std::size_t grain, unsigned threads,
                 const std::function<void(std::size_t begin, std::size_t end)>& body);

} // namespace spark
