#include "core/plan/configgroups.h"

#include "core/plan/nameregex.h"
#include "core/plan/vllmmatching.h"

#include <algorithm>
#include <map>
#include <optional>

namespace spark {
namespace {

/// A vLLM decision unit: one vLLM layer name (a fused set or one module) and its scheme.
struct Unit
{
    std::string layer;
    std::string className;
    std::vector<std::string> aliases;
    const WeightScheme* scheme = nullptr;
    const RoundingMethod* rounding = nullptr;
    bool quantized = false;
};

std::vector<Unit> unitsOf(const std::vector<PlannedModule>& modules)
{
    std::vector<Unit> units;
    std::map<std::string, std::size_t> index;
    for (const auto& m : modules) {
        const bool head = m.vllmName == "lm_head" && m.decision == PlanDecision::Quantize;
        if ((!m.isLinear() && !head) || index.count(m.vllmName)) {
            continue;
        }
        index[m.vllmName] = units.size();
        units.push_back({m.vllmName, m.vllmClass, m.vllmAliases, m.scheme, m.rounding,
                         m.decision == PlanDecision::Quantize});
    }
    return units;
}

bool anyNameMatches(const MatchEntry& entry, const Unit& unit)
{
    if (entry.matches(unit.layer)) {
        return true;
    }
    return std::any_of(unit.aliases.begin(), unit.aliases.end(),
                       [&](const std::string& a) { return entry.matches(a); });
}

/// A broad leaf regex may serve @p scheme with @p rounding only if it selects no unit of another pair or
/// kept BF16: name/regex targets must be disjoint across groups (schemes-spec §5.2 rule 1).
bool servesOnly(const std::string& entry, const WeightScheme* scheme, const RoundingMethod* rounding,
                const std::vector<Unit>& units)
{
    const MatchEntry compiled(entry);
    const FusedMapping& mapping = standardFusedMapping();
    for (const auto& u : units) {
        const bool same = u.quantized && u.scheme == scheme && u.rounding == rounding;
        if (same) {
            continue;
        }
        if (anyNameMatches(compiled, u)) {
            return false;
        }
        const auto leaf = nameregex::leafOf(u.layer);
        if (const auto it = mapping.find(leaf); it != mapping.end()) {
            for (const auto& shard : it->second) {
                if (compiled.matches(u.layer.substr(0, u.layer.size() - leaf.size()) + shard)) {
                    return false;
                }
            }
        }
    }
    return true;
}

std::string checkGroups(const std::vector<ConfigGroup>& groups, const std::vector<Unit>& units)
{
    static const FusedMapping empty;
    for (const FusedMapping* mapping : {&empty, &standardFusedMapping()}) {
        for (const auto& u : units) {
            if (!u.quantized) {
                continue; // the ignore list keeps it BF16 before any group is consulted
            }
            std::vector<std::string> names{u.layer};
            names.insert(names.end(), u.aliases.begin(), u.aliases.end());
            for (const auto& name : names) {
                const int selected = selectConfigGroup(groups, name, u.className, *mapping);
                const auto* group = selected < 0 ? nullptr : &groups[static_cast<std::size_t>(selected)];
                if (!group || group->scheme != u.scheme || group->rounding != u.rounding) {
                    return "config groups give " + name + " " +
                           (group ? std::string(group->scheme->name) + " with " +
                                        std::string(group->rounding->name) + " rounding"
                                  : std::string("no scheme")) +
                           " instead of " + std::string(u.scheme->name) + " with " +
                           std::string(u.rounding->name) + " rounding" +
                           (mapping == &empty ? "" : " with packed_modules_mapping");
                }
            }
        }
    }
    return {};
}

} // namespace

ConfigGroupList buildConfigGroups(const std::vector<PlannedModule>& modules)
{
    const auto units = unitsOf(modules);
    // Every (scheme, rounding) pair in weightSchemes() x roundingMethods() order.
    using Pair = std::pair<const WeightScheme*, const RoundingMethod*>;
    std::vector<Pair> pairs;
    for (const auto& s : weightSchemes()) {
        for (const auto& r : roundingMethods()) {
            pairs.emplace_back(&s, &r);
        }
    }
    std::map<Pair, int> count;
    for (const auto& u : units) {
        if (u.quantized && u.layer != "lm_head") {
            ++count[{u.scheme, u.rounding}];
        }
    }
    // The catch-all: the pair with the most units (ties: the first in that order).
    std::optional<Pair> catchAll;
    for (const auto& p : pairs) {
        if (count[p] > 0 && (!catchAll || count[p] > count[*catchAll])) {
            catchAll = p;
        }
    }
    ConfigGroupList list;
    if (catchAll) {
        list.groups.push_back({catchAll->first, {"Linear"}, catchAll->second});
    }
    for (const auto& p : pairs) {
        const auto [scheme, rounding] = p;
        ConfigGroup group{scheme, {}, rounding};
        auto add = [&group](const std::string& target) {
            if (std::find(group.targets.begin(), group.targets.end(), target) == group.targets.end()) {
                group.targets.push_back(target);
            }
        };
        const bool isCatchAll = catchAll && p == *catchAll;
        for (const auto& u : units) {
            if (!u.quantized || u.scheme != scheme || u.rounding != rounding ||
                (isCatchAll && u.layer != "lm_head")) {
                continue;
            }
            if (u.layer == "lm_head") {
                add("lm_head"); // "Linear" never selects a ParallelLMHead (schemes-spec §5.2 rule 4)
                continue;
            }
            if (u.layer.find(".layers.") != std::string::npos) {
                const auto broad = nameregex::leafEntry(u.layer);
                if (servesOnly(broad, scheme, rounding, units)) {
                    add(broad);
                    continue;
                }
            }
            add(nameregex::exactEntry(u.layer));
            for (const auto& alias : u.aliases) {
                add(nameregex::exactEntry(alias));
            }
        }
        if (group.targets.empty()) {
            continue;
        }
        if (isCatchAll) {
            list.groups.front().targets.insert(list.groups.front().targets.end(), group.targets.begin(),
                                               group.targets.end());
        } else {
            list.groups.push_back(std::move(group));
        }
    }
    list.error = checkGroups(list.groups, units);
    return list;
}

int selectConfigGroup(const std::vector<ConfigGroup>& groups, std::string_view layer,
                      std::string_view className, const FusedMapping& mapping)
{
    // target_scheme_map: dict order of first appearance, the last group naming a target owns it.
    std::vector<std::pair<MatchEntry, int>> dict;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        for (const auto& target : groups[g].targets) {
            const auto it = std::find_if(dict.begin(), dict.end(),
                                         [&](const auto& entry) { return entry.first.text() == target; });
            if (it != dict.end()) {
                it->second = static_cast<int>(g);
            } else {
                dict.emplace_back(MatchEntry(target), static_cast<int>(g));
            }
        }
    }
    auto byName = [&](std::string_view name) {
        for (const auto& [entry, group] : dict) {
            if (entry.matches(name)) {
                return group;
            }
        }
        return -1;
    };
    if (const int g = byName(layer); g >= 0) {
        return g;
    }
    for (const auto& [entry, group] : dict) {
        if (!entry.isRegex() && !className.empty() && entry.matchesClass(className)) {
            return group;
        }
    }
    const auto leaf = nameregex::leafOf(layer);
    const auto it = mapping.find(leaf);
    if (it == mapping.end()) {
        return -1;
    }
    int agreed = -1;
    for (const auto& shard : it->second) {
        const int g = byName(std::string(layer.substr(0, layer.size() - leaf.size())) + shard);
        if (g < 0 || (agreed >= 0 && g != agreed)) {
            return -1;
        }
        agreed = g;
    }
    return agreed;
}

} // namespace spark
