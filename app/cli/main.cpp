// sparkulator-cli: the headless front end. Each subcommand lives in its own cmd_*.cpp and only calls core.
#include "args.h"
#include "command.h"
#include "core/io/ioerror.h"
#include "help.h"

#include <algorithm>
#include <csignal>
#include <iostream>

namespace {

void printHelp()
{
    std::cout << "sparkulator-cli " SPARK_VERSION
                 " — inspect and quantize speculative-decoding draft checkpoints\n\n"
                 "usage: sparkulator-cli COMMAND [ARGS...]\n\ncommands:\n";
    for (const auto& c : spark::cli::commands()) {
        std::cout << "  " << c.name << std::string(12 - std::min<std::size_t>(c.name.size(), 11), ' ')
                  << c.summary << "\n";
    }
    std::cout << "\n'sparkulator-cli COMMAND --help' shows a command's options, 'sparkulator-cli help "
                 "--markdown' every command's.\n"
                 "Exit codes: 0 ok, 1 the work found problems, 2 bad input or usage.\n";
}

const spark::cli::Command* findCommand(const std::string& name)
{
    const auto& all = spark::cli::commands();
    const auto it = std::find_if(all.begin(), all.end(), [&](const auto& c) { return c.name == name; });
    return it == all.end() ? nullptr : &*it;
}

} // namespace

int main(int argc, char** argv)
{
    // A file-size limit must surface as a write error (EFBIG) that names the file, not kill the process.
    std::signal(SIGXFSZ, SIG_IGN);

    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 2 && args[0] == "help" && args[1] == "--markdown") {
        spark::cli::printMarkdownReference(std::cout);
        return spark::cli::kExitOk;
    }
    if (args.size() == 2 && args[0] == "help" && findCommand(args[1])) {
        spark::cli::printCommandHelp(std::cout, *findCommand(args[1]));
        return spark::cli::kExitOk;
    }
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        printHelp();
        return args.empty() ? spark::cli::kExitError : spark::cli::kExitOk;
    }
    if (args[0] == "--version") {
        std::cout << "sparkulator-cli " SPARK_VERSION "\n";
        return 0;
    }
    const auto* command = findCommand(args[0]);
    if (!command) {
        std::cerr << "sparkulator-cli: unknown command '" << args[0] << "' (see --help)\n";
        return spark::cli::kExitError;
    }
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (!rest.empty() && (rest[0] == "--help" || rest[0] == "-h")) {
        spark::cli::printCommandHelp(std::cout, *command);
        return 0;
    }
    try {
        return command->run(rest);
    } catch (const spark::cli::UsageError& e) {
        std::cerr << "sparkulator-cli " << command->name << ": " << e.what() << "\n"
                  << spark::cli::usageLine(*command) << "\nsee sparkulator-cli " << command->name
                  << " --help\n";
    } catch (const spark::IoError& e) {
        std::cerr << "sparkulator-cli " << command->name << ": " << e.what() << "\n";
    } catch (const std::exception& e) {
        std::cerr << "sparkulator-cli " << command->name << ": error: " << e.what() << "\n";
    }
    return spark::cli::kExitError;
}
