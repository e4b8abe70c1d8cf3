#include "format.h"

#include <algorithm>
#include <cstdio>

namespace spark::cli {

std::string formatCount(std::uint64_t count)
{
    if (count >= 1'000'000'000) {
        return formatFixed(static_cast<double>(count) / 1e9, 2) + " G";
    }
    if (count >= 1'000'000) {
        return formatFixed(static_cast<double>(count) / 1e6, 2) + " M";
    }
    if (count >= 10'000) {
        return formatFixed(static_cast<double>(count) / 1e3, 1) + " K";
    }
    return std::to_string(count);
}

std::string formatPercent(std::uint64_t part, std::uint64_t whole)
{
    return whole == 0 ? "-"
                      : formatFixed(100.0 * static_cast<double>(part) / static_cast<double>(whole), 2) + "%";
}

void Table::print(std::ostream& out) const
{
    std::vector<std::size_t> width(m_header.size());
    for (std::size_t c = 0; c < m_header.size(); ++c) {
        width[c] = m_header[c].size();
        for (const auto& row : m_rows) {
            if (c < row.size()) {
                width[c] = std::max(width[c], row[c].size());
            }
        }
    }
    auto printRow = [&](const std::vector<std::string>& row) {
        std::string line;
        for (std::size_t c = 0; c < m_header.size(); ++c) {
            const std::string cell = c < row.size() ? row[c] : "";
            line += cell;
            if (c + 1 < m_header.size()) {
                line += std::string(width[c] - cell.size() + 2, ' ');
            }
        }
        out << line << "\n";
    };
    printRow(m_header);
    std::vector<std::string> rule;
    for (auto w : width) {
        rule.emplace_back(w, '-');
    }
    printRow(rule);
    for (const auto& row : m_rows) {
        printRow(row);
    }
}

} // namespace spark::cli
