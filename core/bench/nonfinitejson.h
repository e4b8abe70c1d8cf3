#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief JSON text with Python's non-standard tokens neutralised, and where they were.
struct SanitizedJson
{
    /// One bare token (NaN, Infinity, -Infinity) that was replaced by null.
    struct Replacement
    {
        int line = 0; ///< 1-based line of the token
        std::string token;
        std::string key; ///< the object key the value belonged to, when it had one
    };
    std::string text;
    std::vector<Replacement> replacements;
};

/// @brief Replaces the bare tokens NaN, Infinity and -Infinity outside strings by null.
/// Python's json.dump (allow_nan=True) writes them, e.g. for `--burstiness inf`, but they are not JSON,
/// and nlohmann (like QJsonDocument) rejects them. Strings are left untouched, so a generated text
/// containing the word "NaN" survives.
SanitizedJson sanitizeNonFiniteJson(std::string_view text);

/// @brief 1-based line number of byte @p offset in @p text.
int lineOfOffset(std::string_view text, std::size_t offset);

} // namespace spark
