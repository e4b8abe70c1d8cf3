#include "core/demo/democapture.h"

#include "core/forward/acceptance.h"
#include "core/forward/capturewriter.h"
#include "core/forward/draftforward.h"
#include "core/io/floatconv.h"
#include "core/io/ioerror.h"
#include "core/io/stagingdirectory.h"
#include "core/util/splitmix.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

namespace spark {
namespace {

double uniform(std::uint64_t& state)
{
    return static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
}

} // namespace

std::optional<DemoDraft> describeDemoTarget(const DemoDraft& draft)
{
    std::set<std::string> shipped;
    for (const auto& t : draft.tensors) {
        shipped.insert(t.name);
    }
    const auto& c = draft.config.contains("transformer_layer_config")
                        ? draft.config["transformer_layer_config"]
                        : draft.config;
    const auto hidden = draft.config.value("target_hidden_size", c.value("hidden_size", std::uint64_t{0}));
    const auto vocab = c.value("vocab_size", std::uint64_t{0});
    DemoDraft target{draft.arch + "-target", {}, {}};
    if (!shipped.contains("embed_tokens.weight")) {
        target.tensors.push_back({"model.embed_tokens.weight", DType::BF16, {vocab, hidden}});
    }
    if (!shipped.contains("lm_head.weight")) {
        target.tensors.push_back({"lm_head.weight", DType::BF16, {vocab, hidden}});
    }
    if (target.tensors.empty()) {
        return std::nullopt;
    }
    target.tensors.push_back({"model.norm.weight", DType::BF16, {hidden}});
    target.config["architectures"] = {"SparkulatorDemoTarget"};
    target.config["hidden_size"] = hidden;
    target.config["vocab_size"] = vocab;
    target.config["tie_word_embeddings"] = false;
    return target;
}

void writeDemoCapture(const DemoDraft& draft, const std::filesystem::path& draftPath,
                      const std::filesystem::path& out, const DemoCaptureOptions& options)
{
    if (options.prompt < 1 || options.length <= options.prompt + options.k + 1 || options.samples < 1) {
        throw std::invalid_argument("a demo capture needs samples ≥ 1 and length > prompt + k + 1");
    }
    StagingDirectory staging(out, {draftPath});
    std::shared_ptr<const Checkpoint> target;
    if (const auto targetDraft = describeDemoTarget(draft)) {
        DemoWriteOptions targetOptions;
        targetOptions.seed = options.seed + 1;
        targetOptions.threads = options.threads;
        writeDemoDraft(*targetDraft, staging.path() / "target", targetOptions);
        target = std::make_shared<const Checkpoint>(Checkpoint::open(staging.path() / "target"));
    }
    const auto checkpoint = std::make_shared<const Checkpoint>(Checkpoint::open(draftPath));
    const auto spec = readDraftSpec(*checkpoint);
    const DraftForward forward(spec, DraftWeights(checkpoint, target), options.threads);

    // The capture holds the draft's aux layers and the target's last layer, in increasing id order (vLLM's
    // concatenation order), so the draft must find its layers by value.
    std::set<int> idSet(spec.auxLayerIds.begin(), spec.auxLayerIds.end());
    idSet.insert(*idSet.rbegin() + 1);
    const std::vector<int> ids(idSet.begin(), idSet.end());
    std::vector<int> slots;
    for (const int id : spec.auxLayerIds) {
        slots.push_back(static_cast<int>(std::find(ids.begin(), ids.end(), id) - ids.begin()));
    }
    const std::int64_t h = spec.targetHidden;
    const auto layers = static_cast<std::int64_t>(ids.size());
    const std::int64_t total = options.samples * options.length;
    std::vector<std::uint16_t> hidden(static_cast<std::size_t>(total * layers * h));
    std::vector<std::int32_t> tokens(static_cast<std::size_t>(total));
    std::vector<std::uint8_t> lossMask(static_cast<std::size_t>(total));
    std::vector<std::int64_t> offsets{0};
    std::uint64_t state = options.seed ^ 0x5EEDCAFEF00Dull;
    const auto randomToken = [&] {
        std::int64_t t;
        do {
            t = static_cast<std::int64_t>(splitmix64(state) % static_cast<std::uint64_t>(spec.vocab));
        } while (t == spec.maskTokenId);
        return t;
    };
    for (std::int64_t s = 0; s < options.samples; ++s) {
        const std::int64_t base = s * options.length;
        for (std::int64_t i = 0; i < options.length * layers * h; ++i) {
            // Residual-stream-like values: Gaussian-ish with a few large channels.
            const double u1 = std::max(uniform(state), 1e-12), u2 = uniform(state);
            double v = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
            if (i % h == 7) {
                v *= 20;
            }
            hidden[static_cast<std::size_t>(base * layers * h + i)] = floatToBf16(static_cast<float>(v));
        }
        std::vector<std::int64_t> seq(static_cast<std::size_t>(options.length));
        for (auto& t : seq) {
            t = randomToken();
        }
        Activations aux(options.length, static_cast<std::int64_t>(slots.size()) * h);
        for (std::int64_t t = 0; t < options.length; ++t) {
            for (std::size_t k = 0; k < slots.size(); ++k) {
                const std::uint16_t* src = hidden.data() + ((base + t) * layers + slots[k]) * h;
                for (std::int64_t c = 0; c < h; ++c) {
                    aux.row(t)[static_cast<std::int64_t>(k) * h + c] = bf16ToFloat(src[c]);
                }
            }
        }
        // Replay the online loop with the BF16 draft: its accepted proposals become the target's tokens.
        std::int64_t a = options.prompt;
        while (a < options.length - 1) {
            if (!reportProgress(options.progress, static_cast<std::uint64_t>(base + a),
                                static_cast<std::uint64_t>(total))) {
                throw IoError(IoErrorKind::Cancelled, out.string(), "demo capture cancelled");
            }
            const auto context = forward.buildContext(aux, seq, a);
            const auto proposals = forward.propose(context, seq, {a}, options.k, false);
            int accepted = 0;
            while (accepted < options.k && a + accepted + 1 < options.length &&
                   uniform(state) < options.acceptRate) {
                seq[a + accepted + 1] = proposals.token(0, accepted);
                ++accepted;
            }
            if (a + accepted + 1 < options.length && accepted < options.k) {
                std::int64_t other = randomToken();
                while (other == proposals.token(0, accepted)) {
                    other = randomToken();
                }
                seq[a + accepted + 1] = other;
            }
            a += accepted + 1;
        }
        for (std::int64_t t = 0; t < options.length; ++t) {
            tokens[static_cast<std::size_t>(base + t)] = static_cast<std::int32_t>(seq[t]);
            lossMask[static_cast<std::size_t>(base + t)] = t >= options.prompt ? 1 : 0;
        }
        offsets.push_back(base + options.length);
    }
    const auto n = static_cast<std::uint64_t>(total);
    writeCaptureFile(staging.path() / kCaptureFileName,
                     {std::move(hidden),
                      ids,
                      static_cast<std::uint64_t>(h),
                      std::move(tokens),
                      std::move(offsets),
                      std::move(lossMask),
                      {{"target_model", "synthetic (Sparkulator demo of " + draft.arch + ")"},
                       {"target_revision", "none"},
                       {"target_quantization", "none"},
                       {"capture", "sparkulator-cli demo --capture"},
                       {"last_layer_included", "true"},
                       {"target_num_layers", std::to_string(ids.back())},
                       {"greedy", "true"},
                       {"dtype", "bfloat16"}}});
    staging.commit([&] { return reportProgress(options.progress, n, n); });
}

} // namespace spark
