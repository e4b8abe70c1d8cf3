#include "core/plan/entrypreview.h"

#include <algorithm>

namespace spark {
namespace {

bool isIdentifierChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::vector<std::string> namesOf(const DraftModule& m)
{
    std::vector<std::string> names{m.vllmName};
    if (m.vllmShardName != m.vllmName) {
        names.push_back(m.vllmShardName);
    }
    names.insert(names.end(), m.vllmAliases.begin(), m.vllmAliases.end());
    return names;
}

} // namespace

std::string_view entryKindName(EntryKind kind)
{
    switch (kind) {
    case EntryKind::Target:
        return "target";
    case EntryKind::Scheme:
        return "scheme";
    default:
        return "ignore";
    }
}

std::string escapeRegex(std::string_view text)
{
    std::string out;
    for (char c : text) {
        if (std::string_view(".^$*+?()[]{}|\\").find(c) != std::string_view::npos) {
            out += '\\';
        }
        out += c;
    }
    return out;
}

EntryPreview previewEntry(const MatchEntry& entry, EntryKind kind, std::string source,
                          const std::vector<DraftModule>& modules)
{
    EntryPreview preview;
    preview.entry = entry.text();
    preview.kind = kind;
    preview.source = std::move(source);
    if (!entry.isValid()) {
        preview.valid = false;
        preview.error = entry.errorMessage();
        preview.errorOffset = entry.errorOffset();
        return preview;
    }
    std::string prefixOnly;  // a name matched only by a prefix that stops inside a name component
    std::string fullExample; // a name matched in full, to show what an unanchored pattern would add
    for (const auto& m : modules) {
        bool matched = false;
        for (const auto& name : namesOf(m)) {
            const auto end = entry.matchEnd(name);
            if (!end) {
                continue;
            }
            if (!matched) {
                preview.matches.push_back({name, m.name});
                matched = true;
            }
            if (*end < name.size() && *end > 0 && isIdentifierChar(name[*end]) &&
                isIdentifierChar(name[*end - 1])) {
                prefixOnly = prefixOnly.empty() ? name : prefixOnly;
            } else if (*end == name.size() && fullExample.empty()) {
                fullExample = name;
            }
        }
        // vLLM's class-name path (check_contains): "Linear" selects QKVParallelLinear, ReplicatedLinear, ...
        if (!matched && kind != EntryKind::Ignore && !m.vllmClass.empty() &&
            entry.matchesClass(m.vllmClass)) {
            preview.matches.push_back({m.vllmName, m.name});
        }
    }

    if (preview.matches.empty()) {
        if (!entry.isRegex()) {
            const auto it = std::find_if(modules.begin(), modules.end(), [&](const DraftModule& m) {
                return m.name == entry.text() || m.vllmName.ends_with("." + entry.text());
            });
            std::string hint = "matches nothing: a literal name never matches vLLM's prefixed name";
            hint += it != modules.end()
                        ? " ('" + it->vllmName + "'): use re:.*\\." + escapeRegex(entry.text()) + "$"
                        : ": use re:";
            preview.warnings.push_back(hint);
        } else {
            preview.warnings.push_back("matches nothing: no vLLM module name of this draft starts with a "
                                       "match (re: is anchored at the "
                                       "start: begin with .* to match a suffix)");
        }
    }
    for (const auto dot : entry.unescapedDots()) {
        preview.warnings.push_back("unescaped '.' at position " + std::to_string(dot) +
                                   " matches any character: write \\. for a literal dot");
    }
    if (!entry.hasEndAnchor()) {
        if (!prefixOnly.empty()) {
            preview.warnings.push_back("no end anchor: matches '" + prefixOnly +
                                       "' by a prefix that stops inside a name; end the pattern with $");
        } else if (!fullExample.empty() && entry.matches(fullExample + "1")) {
            preview.warnings.push_back("no end anchor: it would also match longer names such as '" +
                                       fullExample + "1'; end the pattern with $");
        }
    }
    return preview;
}

} // namespace spark
