#include "core/bench/bencherror.h"

namespace spark {
namespace {

std::string composeBenchMessage(const std::string& file, int line, const std::string& problem)
{
    std::string where = file.empty() ? std::string("<input>") : file;
    if (line > 0) {
        where += ":" + std::to_string(line);
    }
    return where + ": " + problem;
}

} // namespace

BenchError::BenchError(std::string file, int line, std::string problem)
    : std::runtime_error(composeBenchMessage(file, line, problem)), m_file(std::move(file)), m_line(line),
      m_problem(std::move(problem))
{
}

} // namespace spark
