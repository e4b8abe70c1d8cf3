#include "core/bench/nonfinitejson.h"

#include <array>
#include <cctype>

namespace spark {
namespace {

bool isWordChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' || c == '-';
}

} // namespace

int lineOfOffset(std::string_view text, std::size_t offset)
{
    int line = 1;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
        }
    }
    return line;
}

SanitizedJson sanitizeNonFiniteJson(std::string_view text)
{
    static constexpr std::array<std::string_view, 3> kTokens{"-Infinity", "Infinity", "NaN"};
    SanitizedJson result;
    result.text.reserve(text.size());
    bool inString = false;
    int line = 1;
    std::string currentString;
    std::string lastKey;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') {
            ++line;
        }
        if (inString) {
            result.text.push_back(c);
            if (c == '\\' && i + 1 < text.size()) {
                result.text.push_back(text[++i]);
                currentString.push_back(text[i]);
            } else if (c == '"') {
                inString = false;
                // Remember the string as a key if a colon follows, so that warnings can name the field.
                std::size_t j = i + 1;
                while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) {
                    ++j;
                }
                if (j < text.size() && text[j] == ':') {
                    lastKey = currentString;
                }
            } else {
                currentString.push_back(c);
            }
            continue;
        }
        if (c == '"') {
            inString = true;
            currentString.clear();
            result.text.push_back(c);
            continue;
        }
        const bool atTokenStart = result.text.empty() || !isWordChar(result.text.back());
        bool replaced = false;
        if (atTokenStart) {
            for (const auto token : kTokens) {
                if (text.substr(i, token.size()) == token &&
                    (i + token.size() == text.size() || !isWordChar(text[i + token.size()]))) {
                    result.text += "null";
                    result.replacements.push_back({line, std::string(token), lastKey});
                    i += token.size() - 1;
                    replaced = true;
                    break;
                }
            }
        }
        if (!replaced) {
            result.text.push_back(c);
        }
    }
    return result;
}

} // namespace spark
