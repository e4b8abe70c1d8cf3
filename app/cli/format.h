#pragma once

#include "core/util/textformat.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace spark::cli {

/// "1.23 M", "456.8 K", "999"
std::string formatCount(std::uint64_t count);
/// "12.34%" of @p part in @p whole ("-" when whole is 0)
std::string formatPercent(std::uint64_t part, std::uint64_t whole);

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
