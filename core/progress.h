#pragma once

#include <cstdint>
#include <functional>

namespace spark {

/// @brief Progress and cancellation for long work: called with the units done so far and the total;
/// returning false asks the work to stop (it then throws a Cancelled error and leaves nothing behind).
using ProgressFn = std::function<bool(std::uint64_t done, std::uint64_t total)>;

/// @brief Calls @p progress when set; true means "go on".
inline bool reportProgress(const ProgressFn& progress, std::uint64_t done, std::uint64_t total)
{
    return !progress || progress(done, total);
}

} // namespace spark
