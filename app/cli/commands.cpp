#include "command.h"

namespace spark::cli {

// Entry points, one per cmd_*.cpp.
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

// Listed in the order of the workflow: open, measure, decide, export, check, document, benchmark.
const std::vector<Command>& commands()
{
    static const std::vector<Command> all{
        {"demo", "write a synthetic draft checkpoint of a known architecture",
         "--arch laguna-dflash|glm-dspark|qwen3-dflash|llama-eagle3 [--scale tiny|full] --out DIR [--seed N] "
         "[--max-shard-size SIZE] [--threads N] [--capture DIR [--capture-samples N] [--capture-length T]]",
         runDemo},
        {"inspect", "list every tensor of a checkpoint (header only)", "PATH [--json]", runInspect},
        {"analyze", "per-tensor quantization error of any scheme, without writing anything",
         "PATH [--scheme S | --bits 4|8 --group 32|64|128|-1] [--scheme ENTRY=S]... "
         "[--rounding rtn|mse|range] [--rounding ENTRY=METHOD]... [plan options] "
         "[--threads N] "
         "[--backend auto|cpu|cuda] [--cuda-memory SIZE] [--json]",
         runAnalyze},
        {"sweep", "rel_err and bytes of every decision unit under every legal candidate scheme, in one pass",
         "PATH [plan options] [--candidates S,S,...] [--rounding-candidates rtn,mse,range] [--device "
         "gb10|h200] "
         "[--threads N] [--json]",
         runSweep},
        {"plan", "decide what to quantize, explain it, lint it and predict size and drafter time",
         "PATH [--preset P] [--target E]... [--ignore E]... [--scheme ENTRY=S]... "
         "[--rounding rtn|mse|range] [--rounding ENTRY=METHOD]... [--target-layers N] "
         "[--bits 4|8] [--group G] [--tp N] [--plan-file F] [--save-plan F] "
         "[--drafter-ms MS] [--bandwidth-gbps X | --device gb10|h200] [--cycle-ms MS] [--json] "
         "[--budget SIZE|preset | --budget-file SIZE|preset | --budget-ms MS] [--candidates S,S,...] "
         "[--rounding-candidates rtn,mse,range] [--alpha ENTRY=X]... [--alpha-from SENSITIVITY.json] "
         "[--compare-preset] [--threads N] "
         "[--hidden-states CAPTURE [--target-model DIR] [--k K] [--screen-anchors N] [--confirm-anchors N] "
         "[--report-anchors N|all] [--seed S] [--best-speed [--speed-points N]]]",
         runPlan},
        {"capture", "what a capture of target hidden states holds and every defect of its hidden states",
         "check FILE|DIR [--json]", runCapture},
        {"acceptance",
         "offline acceptance of the BF16 and the quantized draft on captured target hidden states, paired",
         "DRAFT --hidden-states FILE|DIR [--target PATH] [plan options | --quantized CKPT | --bf16-only] "
         "[--k K] "
         "[--anchors N|all] [--seed S] [--replay] [--batch N] [--threads N] [--json] "
         "[--dump-logits OUT.safetensors --max-anchors M] [--drafter-ms MS --cycle-ms MS [--saving-ms MS]] "
         "[--per-unit [--sensitivity-out FILE]] [--export-rates FILE [--rates-of bf16|quantized]]",
         runAcceptance},
        {"match", "match one quantization entry against names with vLLM's semantics", "ENTRY NAME...",
         runMatch},
        {"quantize",
         "write a compressed-tensors checkpoint (a scheme per module) with its model card, then verify it",
         "PATH --out DIR [--preset P] [--target E]... [--ignore E]... [--scheme ENTRY=S]... "
         "[--rounding rtn|mse|range] [--rounding ENTRY=METHOD]... [--target-layers N] "
         "[--bits 4|8] "
         "[--group 32|64|128|-1] [--tp N] [--plan-file F] [--max-shard-size SIZE] [--threads N] "
         "[--backend auto|cpu|cuda] "
         "[--cuda-memory SIZE] "
         "[--gptq --hidden-states FILE|DIR [--samples N] [--k K] [--target-checkpoint PATH] "
         "[--gptq-memory SIZE]] "
         "[--no-verify] "
         "[--target-model M] [--target-precision P] [--license L] [--base-model B] [--model-name N] [--bench "
         "FILE]...",
         runQuantize},
        {"verify", "check an exported checkpoint against its source, bit for bit",
         "SRC OUT [--json] [--target-layers N] [--threads N] [--backend auto|cpu|cuda] [--cuda-memory SIZE]",
         runVerify},
        {"check",
         "audit any compressed-tensors checkpoint against the rules vLLM loads it by (no source needed)",
         "PATH [--vllm-version V] [--target-layers N] [--modules] [--json]", runCheck},
        {"compare",
         "a source against any quantized output of it: scheme, bytes, error and bit-exactness per module",
         "SRC OUT [--json] [--target-layers N] [--threads N] [--backend auto|cpu|cuda] [--cuda-memory SIZE]",
         runCompare},
        {"card", "write the model card (README.md) of a planned export",
         "PATH [--out FILE] [plan options as for quantize] [--target-model M] [--target-precision P] "
         "[--license L] "
         "[--base-model B] [--model-name N] [--bench FILE]... [--drafter-ms MS [--drafter-kind chain|block] "
         "[--saving-ms MS]]",
         runCard},
        {"report",
         "benchmark statistics: vLLM results, /metrics pairs, CSV, logs, llama-bench; with --drafter-ms "
         "the speed model (predicted tok/s and the best k)",
         "FILES... [--baseline ARM] [--markdown] [--json] [--plot OUT.png|.svg|.pdf] [--arm ARM] "
         "[--prompt-len N] [--repeat N] [--override-tags] [--metric NAME]... [--confidence 0.95] "
         "[--drafter-ms MS [--drafter-kind chain|block] [--saving-ms MS | --plan DRAFT_PATH [plan options]] "
         "[--quantized-arm ARM]]",
         runReport},
        {"perf", "measure analyze, sweep and quantize+pack throughput against memory and file bandwidth",
         "[--size GIB] [--threads N] [--scheme S|all]... [--rounding mse|range]... [--backend auto|cpu|cuda] "
         "[--cuda-memory SIZE] | "
         "--forward DRAFT [--target T] [--k K] [--anchors N] [--context T] [--threads N]",
         runPerf},
    };
    return all;
}

} // namespace spark::cli
