#include "options.h"

#include <algorithm>

namespace spark::cli {

OptionTable joinTables(std::initializer_list<OptionTable> tables)
{
    OptionTable all;
    for (const auto& table : tables) {
        all.insert(all.end(), table.begin(), table.end());
    }
    return all;
}

OptionTable withOption(OptionTable table, const Option& option)
{
    std::replace_if(
        table.begin(), table.end(), [&](const Option& o) { return o.name == option.name; }, option);
    return table;
}

} // namespace spark::cli
