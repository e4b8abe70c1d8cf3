// `perf --forward DRAFT [--target-model T] [--k K] [--anchors N] [--context T] [--numerics fp32|bf16]
// [--per-unit]`:
// offline-acceptance throughput of the reference forward on a draft, and its GEMM against the library's own
// on the shapes that dominate.
#include "perfforward.h"

#include "core/forward/forwardbenchmark.h"
#include "core/util/textformat.h"
#include "numericsargs.h"

#include <iostream>

namespace spark::cli {

int runForwardPerf(const Args& args, unsigned threads)
{
    const auto draft = *args.value("forward");
    const int k = static_cast<int>(args.integer("k", 2, 1, 64));
    const auto anchors = args.integer("anchors", 64, 1, 100000);
    const auto context = args.integer("context", 512, 1, 1'000'000);
    // Decode-sized GEMMs of a 6144-wide draft: M query rows (anchors × block rows) against MLP-sized weights.
    for (const std::int64_t m : {16, 128}) {
        const auto g = benchmarkGemm(m, 6144, 12288, threads);
        std::cout << "gemm M=" << g.m << " K=" << g.k << " N=" << g.n << " (" << g.target << ", " << threads
                  << " threads): forward " << formatFixed(g.tiledGflops, 1) << " GFLOP/s, plain sgemm "
                  << formatFixed(g.plainGflops, 1) << " GFLOP/s, ratio "
                  << formatFixed(g.tiledGflops / g.plainGflops, 2) << "; bf16 (" << g.bf16Target << ") "
                  << formatFixed(g.bf16Gflops, 1) << " GFLOP/s; bf16 kernels alone:";
        for (const auto& [name, gflops] : g.bf16KernelGflops) {
            std::cout << " " << name << " " << formatFixed(gflops, 1);
        }
        std::cout << " GFLOP/s\n";
    }
    const auto numerics = numericsFrom(args);
    const auto a =
        benchmarkAcceptance(draft, args.value("target-model", ""), k, anchors, context, threads, numerics);
    std::cout << "acceptance " << a.architecture << " k=" << a.k << ": " << a.anchors
              << " anchors (BF16 + default plan, " << context << " context tokens, "
              << forwardNumericsName(numerics) << " activations) in " << formatFixed(a.seconds, 1)
              << " s: " << formatFixed(a.anchorsPerMinute, 1) << " anchors/minute\n";
    if (args.flag("per-unit")) {
        const auto s = benchmarkSensitivity(draft, args.value("target-model", ""), k, anchors, context,
                                            threads, numerics);
        std::cout << "per-unit sensitivity: " << s.units << " units over " << s.anchors << " anchors ("
                  << forwardNumericsName(numerics) << " activations) in " << formatFixed(s.seconds, 1)
                  << " s\n";
    }
    return 0;
}

} // namespace spark::cli
