#pragma once

#include <cstdint>

namespace spark {

/// @brief splitmix64: a tiny, fast generator whose sequence is the same on every machine and compiler (the
/// demo drafts, synthetic captures and anchor sampling depend on that).
inline std::uint64_t splitmix64(std::uint64_t& state)
{
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

} // namespace spark
