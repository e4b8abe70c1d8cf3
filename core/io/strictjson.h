#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace spark {

/// @brief Thrown by parseStrictJson when an object repeats a key (most JSON parsers silently keep one).
class DuplicateJsonKey : public std::runtime_error
{
  public:
    explicit DuplicateJsonKey(std::string key)
        : std::runtime_error("duplicate key '" + key + "'"), m_key(std::move(key))
    {
    }
    const std::string& key() const { return m_key; }

  private:
    std::string m_key;
};

/// @brief Parses JSON and rejects duplicate keys in any object. Throws nlohmann::json::parse_error
/// for malformed text and DuplicateJsonKey for repeated keys.
nlohmann::json parseStrictJson(std::string_view text);

/// @brief True when @p text is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool isValidUtf8(std::string_view text);

} // namespace spark
