#include "captureargs.h"

#include <sstream>

namespace spark::cli {

OptionTable captureReadOptionTable()
{
    return {
        {"layer-ids", "ID,ID,...", "recorded, or the draft's",
         "the captured layers' ids in slot order (vLLM's and speculators' files record none; replaces "
         "recorded ids)"},
        {"prompt-tokens", "N", "recorded",
         "leading tokens of every captured sequence the target did not generate, for captures without a loss "
         "mask (vLLM's connector files)"},
    };
}

CaptureReadOptions captureReadOptionsFrom(const Args& args)
{
    CaptureReadOptions options;
    if (const auto ids = args.value("layer-ids")) {
        std::stringstream list(*ids);
        std::string item;
        while (std::getline(list, item, ',')) {
            std::size_t used = 0;
            int id = -1;
            try {
                id = std::stoi(item, &used);
            } catch (...) {
            }
            if (id < 0 || used != item.size()) {
                throw UsageError("--layer-ids: '" + item + "' is not a layer id (give ids like 1,3,5,6)");
            }
            options.layerIds.push_back(id);
        }
        if (options.layerIds.empty()) {
            throw UsageError("--layer-ids: give the captured layers' ids, like 1,3,5,6");
        }
    }
    if (args.value("prompt-tokens")) {
        options.promptTokens = args.integer("prompt-tokens", 0, 0, 1'000'000'000);
    }
    return options;
}

} // namespace spark::cli
