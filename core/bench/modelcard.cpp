#include "core/bench/modelcard.h"

#include "core/bench/benchreportformat.h"
#include "core/bench/speedmodelformat.h"
#include "core/util/textformat.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace spark {
namespace {

std::string lowerTag(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

std::string escapeCell(const std::string& text)
{
    std::string out;
    for (const char c : text) {
        out += c == '|' ? std::string("\\|") : std::string(1, c == '\n' ? ' ' : c);
    }
    return out;
}

/// A lint message starts lower-case (it follows "module: "); a card bullet reads as a sentence.
std::string capitalized(std::string text)
{
    if (!text.empty() && text[0] >= 'a' && text[0] <= 'z') {
        text[0] = static_cast<char>(text[0] - 'a' + 'A');
    }
    return text;
}

std::string jsonString(const std::string& s)
{
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    return out + "\"";
}

} // namespace

std::string yamlScalar(const std::string& text)
{
    const bool plain = !text.empty() &&
                       std::all_of(text.begin(), text.end(),
                                   [](unsigned char c) {
                                       return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '/';
                                   }) &&
                       !std::isdigit(static_cast<unsigned char>(text.front())) && text != "true" &&
                       text != "false" && text != "null" && text != "yes" && text != "no";
    if (plain) {
        return text;
    }
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out + "\"";
}

std::string renderModelCard(const ModelCardInputs& in)
{
    std::string md = "---\n";
    if (!in.baseModel.empty()) {
        md += "base_model: " + yamlScalar(in.baseModel) + "\n";
    }
    md += "license: " + yamlScalar(in.license.empty() ? std::string("other") : in.license) + "\n";
    std::vector<std::string> tags{"speculative-decoding"};
    if (!in.architecture.empty()) {
        tags.push_back(lowerTag(in.architecture));
    }
    // One tag per scheme of a mixed checkpoint ("W4A16 + W8A16").
    for (std::size_t start = 0; start <= in.scheme.size();) {
        const auto end = std::min(in.scheme.find(" + ", start), in.scheme.size());
        tags.push_back(lowerTag(in.scheme.substr(start, end - start)));
        start = end + 3;
    }
    tags.push_back("compressed-tensors");
    for (const auto& t : in.extraTags) {
        tags.push_back(t);
    }
    std::vector<std::string> unique;
    for (const auto& t : tags) {
        if (std::find(unique.begin(), unique.end(), t) == unique.end()) {
            unique.push_back(t);
        }
    }
    md += "tags:\n";
    for (const auto& t : unique) {
        md += "- " + yamlScalar(t) + "\n";
    }
    md += "---\n\n";

    const std::string name = in.modelName.empty() ? std::string("Quantized draft model") : in.modelName;
    md += "# " + name + "\n\n";
    md += "A " + in.scheme + " (" + in.schemeDetail + ") compressed-tensors checkpoint of the " +
          (in.architectureName.empty() ? std::string("speculative-decoding draft")
                                       : in.architectureName + " draft") +
          (in.baseModel.empty() ? std::string()
                                : " [" + in.baseModel + "](https://huggingface.co/" + in.baseModel + ")") +
          ", for speculative decoding in vLLM.\n\n";

    md += "## Target pairing\n\n";
    md += "| | |\n|---|---|\n";
    md += "| target (verifier) | " +
          escapeCell(in.targetModel.empty() ? std::string("(not given)") : in.targetModel) + " |\n";
    md += "| target precision | " + escapeCell(in.targetPrecision) + " |\n";
    md += "| method | " + escapeCell(in.speculativeMethod) + " |\n";
    md += "| speculative tokens | " + std::to_string(in.numSpeculativeTokens) + " |\n\n";
    md += "A draft is trained against one target. Paired with another target, or with the same target at "
          "another precision than " +
          in.targetPrecision +
          ", vLLM still runs but acceptance can collapse towards 0% without any error: compare the "
          "acceptance rate with the table below after deploying.\n\n";

    md += "## What was quantized\n\n";
    if (in.quantized.empty()) {
        md += "Nothing.\n\n";
    } else {
        const bool schemes =
            std::any_of(in.quantized.begin(), in.quantized.end(),
                        [](const ModelCardInputs::ModuleReason& m) { return !m.scheme.empty(); });
        md += schemes ? "| module | scheme | reason |\n|---|---|---|\n" : "| module | reason |\n|---|---|\n";
        for (const auto& m : in.quantized) {
            md += "| `" + escapeCell(m.module) + "` | " + (schemes ? escapeCell(m.scheme) + " | " : "") +
                  escapeCell(m.reason) + " |\n";
        }
        md += "\n";
    }
    md += "## What stayed BF16\n\n";
    if (in.keptBf16.empty()) {
        md += "Nothing.\n\n";
    } else {
        md += "| module | reason |\n|---|---|\n";
        for (const auto& m : in.keptBf16) {
            md += "| `" + escapeCell(m.module) + "` | " + escapeCell(m.reason) + " |\n";
        }
        md += "\n";
    }

    if (!in.sizes.empty()) {
        md += "## Size\n\n| part | before | after | ratio |\n|---|---:|---:|---:|\n";
        for (const auto& s : in.sizes) {
            const double ratio = s.bytesBefore > 0
                                     ? static_cast<double>(s.bytesAfter) / static_cast<double>(s.bytesBefore)
                                     : 0.0;
            md += "| " + escapeCell(s.label) + " | " + formatBytes(s.bytesBefore) + " (" +
                  std::to_string(s.bytesBefore) + " B) | " + formatBytes(s.bytesAfter) + " (" +
                  std::to_string(s.bytesAfter) + " B) | " +
                  (s.bytesBefore > 0 ? formatFixed(ratio, 3) : std::string("-")) + " |\n";
        }
        md += "\n";
    }

    if (in.benchmarks && !in.benchmarks->cells.empty()) {
        md += "## Benchmarks\n\n";
        md += benchReportMarkdown(*in.benchmarks, 3);
        md += "\nσ is the Gaussian-equivalent significance −Φ⁻¹(p/2) of Welch's two-sided p; CIs are of the "
              "difference between arms.\n\n";
        if (in.benchmarks->speedModel) {
            const auto speed = speedModelCardMarkdown(*in.benchmarks->speedModel, 2);
            md += speed.empty() ? std::string() : speed + "\n";
        }
    }

    md += "## Usage with vLLM\n\n```bash\n";
    md += "vllm serve " + (in.targetModel.empty() ? std::string("TARGET_MODEL") : in.targetModel) + " \\\n";
    md += "  --speculative-config '{\"method\": " + jsonString(in.speculativeMethod) + ", \"model\": " +
          jsonString(in.modelName.empty() ? std::string("PATH_TO_THIS_MODEL") : in.modelName) +
          ", \"num_speculative_tokens\": " + std::to_string(in.numSpeculativeTokens) + "}'\n```\n\n";

    md += "## Known caveats\n\n";
    for (const auto& warning : in.planWarnings) {
        md += "- **Plan warning.** " + capitalized(warning) + "\n";
    }
    md += "- **Compile cache keyed without the draft's config (fixed by vllm#47911).** vLLM versions before "
          "vllm#47911 key the torch.compile cache without the draft model's config (so without its "
          "quantization), so a cache written for the BF16 draft can be reused for this one (or the reverse) "
          "and fail or misbehave. Work around it with "
          "`VLLM_DISABLE_COMPILE_CACHE=1`, or clear the cache (`~/.cache/vllm/torch_compile_cache`) when "
          "switching drafts.\n";
    md += "- **Target precision pairing.** Acceptance was measured against " +
          (in.targetModel.empty() ? std::string("the target") : in.targetModel) + " in " +
          in.targetPrecision +
          ". A wrong pairing shows as near-zero acceptance and a slowdown, not as an error.\n";
    md += "- **Benchmarks are workload-specific.** Acceptance depends on the prompts and the sampling "
          "temperature; measure on your own traffic.\n\n";
    md += "---\n\nWritten by Sparkulator" + (in.toolVersion.empty() ? std::string() : " " + in.toolVersion) +
          ".\n";
    return md;
}

} // namespace spark
