#pragma once

#include <stdexcept>
#include <string>

namespace spark {

/// @brief A benchmark input that cannot be imported. Always names the file and, where one applies,
/// the 1-based line, so that a user can open the file at the offending spot.
/// what() is "<file>:<line>: <problem>" (or "<file>: <problem>" when no line applies).
class BenchError : public std::runtime_error
{
  public:
    BenchError(std::string file, int line, std::string problem);

    const std::string& file() const { return m_file; }
    /// 1-based; 0 when the problem concerns the whole file.
    int line() const { return m_line; }
    const std::string& problem() const { return m_problem; }

  private:
    std::string m_file;
    int m_line = 0;
    std::string m_problem;
};

} // namespace spark
