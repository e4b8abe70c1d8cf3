#pragma once

#include "core/plan/draftmodule.h"
#include "core/plan/matchentry.h"

#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief Whether an entry selects modules (targets) or keeps them BF16 (ignore).
enum class EntryKind {
    Target, ///< selects modules for the default scheme
    Ignore, ///< keeps modules BF16
    Scheme, ///< a scheme rule "ENTRY=SCHEME": assigns SCHEME to what ENTRY matches (later rules win)
};

/// @brief "target", "ignore", "scheme".
std::string_view entryKindName(EntryKind kind);

/// @brief A module an entry matches: the vLLM name that matched and the checkpoint module behind it.
struct EntryMatch
{
    std::string vllmName;
    std::string module;
};

/// @brief What one entry does to a draft, shown before export: the modules it matches and what looks wrong.
struct EntryPreview
{
    std::string entry; ///< as written ("re:.*\\.fc$"; a scheme rule whole: "re:.*\\.fc$=W8A16")
    EntryKind kind = EntryKind::Ignore;
    std::string source; ///< "preset glm-dspark", "--ignore", "--target", "--scheme"
    std::string scheme; ///< the scheme a Scheme entry assigns ("W8A16"); empty otherwise
    bool valid = true;
    std::string error;    ///< invalid regex: message with its position
    int errorOffset = -1; ///< position inside the pattern (after "re:")
    std::vector<EntryMatch> matches;
    /// Matches nothing (with the literal-name hint), unescaped '.', no end anchor with a longer match.
    std::vector<std::string> warnings;
};

/// @brief Matches @p entry against every module's vLLM names (fused, shard, older aliases; class names too
/// for a target, as vLLM's class-name path does) and explains the result.
EntryPreview previewEntry(const MatchEntry& entry, EntryKind kind, std::string source,
                          const std::vector<DraftModule>& modules);

/// @brief "layers.0.mlp.down_proj" → "layers\.0\.mlp\.down_proj": every regex metacharacter escaped.
std::string escapeRegex(std::string_view text);

} // namespace spark
