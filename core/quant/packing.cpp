#include "core/quant/packing.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace spark {

namespace {

// Eight 4-bit codes, one per byte of a little-endian u64, into one word: fold neighbouring bytes
// into nibbles, then bytes into halfwords, then halfwords into the low 32 bits (no per-element loop).
std::uint32_t packEightNibbles(std::uint64_t x)
{
    x = (x | (x >> 4)) & 0x00FF00FF00FF00FFull;
    x = (x | (x >> 8)) & 0x0000FFFF0000FFFFull;
    x = (x | (x >> 16)) & 0x00000000FFFFFFFFull;
    return static_cast<std::uint32_t>(x);
}

} // namespace

void packUnsignedRow(const std::uint8_t* u, std::size_t cols, int bits, std::int32_t* words)
{
    const std::size_t perWord = bits == 4 ? 8 : 4;
    const std::size_t full = cols / perWord;
    if (bits == 4) {
        for (std::size_t j = 0; j < full; ++j) {
            std::uint64_t x;
            std::memcpy(&x, u + 8 * j, 8);
            words[j] = static_cast<std::int32_t>(packEightNibbles(x));
        }
    } else {
        // 8-bit: the little-endian bytes already are the word.
        std::memcpy(words, u, full * 4);
    }
    const std::size_t rest = cols - full * perWord;
    if (rest > 0) {
        std::uint32_t word = 0;
        for (std::size_t t = 0; t < rest; ++t) {
            word |= static_cast<std::uint32_t>(u[full * perWord + t]) << (bits * static_cast<int>(t));
        }
        words[full] = static_cast<std::int32_t>(word);
    }
}

void packRow(const std::int8_t* q, std::size_t cols, int bits, std::int32_t* words)
{
    const int offset = 1 << (bits - 1);
    std::vector<std::uint8_t> u(cols);
    for (std::size_t k = 0; k < cols; ++k) {
        u[k] = static_cast<std::uint8_t>(q[k] + offset);
    }
    packUnsignedRow(u.data(), cols, bits, words);
}

void unpackRow(const std::int32_t* words, std::size_t cols, int bits, std::int8_t* q)
{
    const std::size_t perWord = static_cast<std::size_t>(32 / bits);
    const std::uint32_t mask = (1u << bits) - 1u;
    const int offset = 1 << (bits - 1);
    std::size_t first = 0;
    if (bits == 4) { // the common case, a byte (two codes) at a time from a table: the forward decodes
                     // every weight of a quantized draft on each pass
        static const auto pairs = [] {
            std::array<std::array<std::int8_t, 2>, 256> table{};
            for (int b = 0; b < 256; ++b) {
                table[b] = {static_cast<std::int8_t>((b & 15) - 8), static_cast<std::int8_t>((b >> 4) - 8)};
            }
            return table;
        }();
        for (; first + perWord <= cols; first += perWord) {
            const auto word = static_cast<std::uint32_t>(words[first / perWord]);
            for (unsigned b = 0; b < 4; ++b) {
                std::memcpy(q + first + 2 * b, pairs[(word >> (8 * b)) & 0xFFu].data(), 2);
            }
        }
    }
    for (; first < cols; first += perWord) {
        auto word = static_cast<std::uint32_t>(words[first / perWord]);
        const std::size_t last = std::min(cols, first + perWord);
        for (std::size_t k = first; k < last; ++k, word >>= bits) {
            q[k] = static_cast<std::int8_t>(static_cast<int>(word & mask) - offset);
        }
    }
}

} // namespace spark
