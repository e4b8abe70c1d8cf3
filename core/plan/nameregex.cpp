#include "core/plan/nameregex.h"

#include "core/plan/entrypreview.h"
#include "core/plan/vllmmatching.h"

#include <algorithm>
#include <vector>

namespace spark::nameregex {

std::string leafOf(std::string_view name)
{
    const auto dot = name.rfind('.');
    return std::string(dot == std::string_view::npos ? name : name.substr(dot + 1));
}

std::string leafAlternation(const std::string& leaf)
{
    const auto& mapping = standardFusedMapping();
    const auto it = mapping.find(leaf);
    if (it == mapping.end()) {
        return escapeRegex(leaf);
    }
    std::vector<std::string> names{leaf};
    names.insert(names.end(), it->second.begin(), it->second.end());
    // Longest common suffix of all names, kept outside the group.
    std::size_t common = 0;
    while (true) {
        const auto n = common + 1;
        if (std::any_of(names.begin(), names.end(), [&](const std::string& s) { return s.size() < n; })) {
            break;
        }
        const char c = names.front()[names.front().size() - n];
        if (std::any_of(names.begin(), names.end(),
                        [&](const std::string& s) { return s[s.size() - n] != c; })) {
            break;
        }
        common = n;
    }
    std::string group = "(";
    for (std::size_t i = 0; i < names.size(); ++i) {
        group += (i ? "|" : "") + escapeRegex(names[i].substr(0, names[i].size() - common));
    }
    return group + ")" + escapeRegex(leaf.substr(leaf.size() - common));
}

std::string exactEntry(const std::string& vllmName)
{
    std::string path = vllmName.starts_with("model.") ? vllmName.substr(6) : vllmName;
    const auto leaf = leafOf(path);
    path.resize(path.size() - leaf.size());
    return "re:.*\\." + escapeRegex(path) + leafAlternation(leaf) + "$";
}

std::string leafEntry(const std::string& vllmName)
{
    return "re:.*\\." + leafAlternation(leafOf(vllmName)) + "$";
}

} // namespace spark::nameregex
