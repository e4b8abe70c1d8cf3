#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace spark::cli {

/// "2.08 GiB", "512.0 KiB", "96 B"
std::string formatBytes(std::uint64_t bytes);
/// "1.23 M", "456.8 K", "999"
std::string formatCount(std::uint64_t count);
/// "12.34%" of @p part in @p whole ("-" when whole is 0)
std::string formatPercent(std::uint64_t part, std::uint64_t whole);
/// A number with @p digits after the point.
std::string formatFixed(double value, int digits);

/// @brief A plain-text table with aligned columns (numbers are right-aligned by the caller's choice).
class Table
{
  public:
    explicit Table(std::vector<std::string> header) : m_header(std::move(header)) {}
    void add(std::vector<std::string> row) { m_rows.push_back(std::move(row)); }
    void print(std::ostream& out) const;

  private:
    std::vector<std::string> m_header;
    std::vector<std::vector<std::string>> m_rows;
};

} // namespace spark::cli
