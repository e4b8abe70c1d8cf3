#include "command.h"
#include "pairargs.h"

namespace spark::cli {

// Entry points and option tables, one pair per cmd_*.cpp (verify and compare share pairargs.h's table).
int runAcceptance(const std::vector<std::string>& args);
int runAnalyze(const std::vector<std::string>& args);
int runCapture(const std::vector<std::string>& args);
int runCard(const std::vector<std::string>& args);
int runCheck(const std::vector<std::string>& args);
int runCompare(const std::vector<std::string>& args);
int runDemo(const std::vector<std::string>& args);
int runInspect(const std::vector<std::string>& args);
int runMatch(const std::vector<std::string>& args);
int runPerf(const std::vector<std::string>& args);
int runPlan(const std::vector<std::string>& args);
int runQuantize(const std::vector<std::string>& args);
int runReport(const std::vector<std::string>& args);
int runSweep(const std::vector<std::string>& args);
int runVerify(const std::vector<std::string>& args);
OptionTable acceptanceOptions();
OptionTable analyzeOptions();
OptionTable captureOptions();
OptionTable cardOptions();
OptionTable checkOptions();
OptionTable demoOptions();
OptionTable inspectOptions();
OptionTable matchOptions();
OptionTable perfOptions();
OptionTable planOptions();
OptionTable quantizeOptions();
OptionTable reportOptions();
OptionTable sweepOptions();

// Listed in the order of the workflow: open, measure, decide, export, check, document, benchmark.
const std::vector<Command>& commands()
{
    static const std::vector<Command> all{
        {"demo", "write a synthetic draft checkpoint of a known architecture", "--arch ARCH --out DIR",
         demoOptions, runDemo},
        {"inspect", "list every tensor of a checkpoint (header only)", "PATH", inspectOptions, runInspect},
        {"analyze", "per-tensor quantization error of any scheme, without writing anything", "PATH",
         analyzeOptions, runAnalyze},
        {"sweep", "rel_err and bytes of every decision unit under every legal candidate scheme, in one pass",
         "PATH", sweepOptions, runSweep},
        {"plan", "decide what to quantize, explain it, lint it and predict size and drafter time", "PATH",
         planOptions, runPlan},
        {"capture",
         "what a capture of target hidden states holds and every defect of its hidden states, or the capture "
         "converted to the product's own file",
         "check FILE|DIR | convert FILE|DIR --out FILE", captureOptions, runCapture},
        {"acceptance",
         "offline acceptance of the BF16 and the quantized draft on captured target hidden states, paired",
         "DRAFT --hidden-states FILE|DIR", acceptanceOptions, runAcceptance},
        {"match", "match one quantization entry against names with vLLM's semantics", "ENTRY NAME...",
         matchOptions, runMatch},
        {"quantize",
         "write a compressed-tensors checkpoint (a scheme per module) with its model card, then verify it",
         "PATH --out DIR", quantizeOptions, runQuantize},
        {"verify", "check an exported checkpoint against its source, bit for bit", "SRC OUT",
         checkpointPairOptionTable, runVerify},
        {"check",
         "audit any compressed-tensors checkpoint against the rules vLLM loads it by (no source needed)",
         "PATH", checkOptions, runCheck},
        {"compare",
         "a source against any quantized output of it: scheme, bytes, error and bit-exactness per module",
         "SRC OUT", checkpointPairOptionTable, runCompare},
        {"card", "write the model card (README.md) of a planned export", "PATH", cardOptions, runCard},
        {"report",
         "benchmark statistics: vLLM results, /metrics pairs, CSV, logs, llama-bench; with --drafter-ms "
         "the speed model (predicted tok/s and the best k)",
         "FILES...", reportOptions, runReport},
        {"perf", "measure analyze, sweep and quantize+pack throughput against memory and file bandwidth", "",
         perfOptions, runPerf},
    };
    return all;
}

} // namespace spark::cli
