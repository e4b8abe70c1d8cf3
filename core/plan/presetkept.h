#pragma once

#include "core/plan/quantplan.h"

#include <map>
#include <string>

namespace spark {

/// @brief Every module of @p plan that a preset's ignore entry keeps BF16, with that entry: its decision is
/// the recipe's, not the user's to toggle (a user's own target or ignore entry changes it).
std::map<std::string, std::string> presetKeptModules(const QuantPlan& plan);

} // namespace spark
