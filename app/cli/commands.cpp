#include "command.h"

namespace spark::cli {

// Entry points, one per cmd_*.cpp.
int runDemo(const std::vector<std::string>& args);
int runInspect(const std::vector<std::string>& args);

const std::vector<Command>& commands()
{
    static const std::vector<Command> all{
        {"demo", "write a synthetic draft checkpoint of a known architecture",
         "--arch laguna-dflash|glm-dspark|qwen3-dflash|llama-eagle3 [--scale tiny|full] --out DIR [--seed N]",
         runDemo},
        {"inspect", "list every tensor of a checkpoint (header only)", "PATH [--json]", runInspect},
    };
    return all;
}

} // namespace spark::cli
