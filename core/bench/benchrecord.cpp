#include "core/bench/benchrecord.h"

namespace spark {

std::optional<double> BenchRecord::metric(const std::string& name) const
{
    const auto it = metrics.find(name);
    if (it == metrics.end()) {
        return std::nullopt;
    }
    return it->second;
}

void BenchImport::append(BenchImport other)
{
    records.insert(records.end(), std::make_move_iterator(other.records.begin()),
                   std::make_move_iterator(other.records.end()));
    warnings.insert(warnings.end(), std::make_move_iterator(other.warnings.begin()),
                    std::make_move_iterator(other.warnings.end()));
}

} // namespace spark
