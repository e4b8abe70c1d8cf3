// A libFuzzer-compatible driver for compilers without libFuzzer (the GCC test build): runs every seed of
// the corpus folder, then a fixed number of deterministic mutations of each (bit flips, byte
// substitutions with "interesting" values, truncations, splices), so the test suite always exercises the
// fuzz target briefly. The real coverage-guided run is the `fuzz` preset (clang).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR [MUTATIONS_PER_SEED]\n", argv[0]);
        return 2;
    }
    const long mutations = argc > 2 ? std::atol(argv[2]) : 2000;
    std::vector<std::vector<std::uint8_t>> seeds;
    for (const auto& entry : std::filesystem::directory_iterator(argv[1])) {
        std::ifstream in(entry.path(), std::ios::binary);
        seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (seeds.empty()) {
        std::fprintf(stderr, "no seeds in %s\n", argv[1]);
        return 2;
    }
    static const std::uint8_t kInteresting[] = {0,   1,   0x7F, 0x80, 0xFF, '{', '}', '[',
                                                ']', '"', ',',  ':',  '-',  '9', '\\'};
    std::uint64_t state = 0x2545F4914F6CDD1Dull;
    auto next = [&state] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    long runs = 0;
    for (const auto& seed : seeds) {
        LLVMFuzzerTestOneInput(seed.data(), seed.size());
        ++runs;
        for (long m = 0; m < mutations; ++m) {
            auto input = seed;
            const int edits = 1 + static_cast<int>(next() % 4);
            for (int e = 0; e < edits && !input.empty(); ++e) {
                const auto at = next() % input.size();
                switch (next() % 4) {
                case 0:
                    input[at] ^= static_cast<std::uint8_t>(1u << (next() % 8));
                    break;
                case 1:
                    input[at] = kInteresting[next() % sizeof kInteresting];
                    break;
                case 2:
                    input.resize(at + 1);
                    break;
                default: {
                    const auto& other = seeds[next() % seeds.size()];
                    input.insert(input.begin() + static_cast<long>(at), other.begin(),
                                 other.begin() + static_cast<long>(std::min<std::size_t>(other.size(), 64)));
                }
                }
            }
            LLVMFuzzerTestOneInput(input.data(), input.size());
            ++runs;
        }
    }
    std::printf("fuzz replay: %ld inputs, no crash\n", runs);
    return 0;
}
