#include "core/io/strictjson.h"

#include <set>
#include <vector>

namespace spark {

nlohmann::json parseStrictJson(std::string_view text)
{
    // The parser callback sees object starts, keys and object ends in document order, so a stack of
    // key sets is enough to find a repeated key at any depth.
    std::vector<std::set<std::string>> openObjects;
    auto callback = [&openObjects](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        using Event = nlohmann::json::parse_event_t;
        if (event == Event::object_start) {
            openObjects.emplace_back();
        } else if (event == Event::object_end) {
            openObjects.pop_back();
        } else if (event == Event::key && !openObjects.empty()) {
            auto key = parsed.get<std::string>();
            if (!openObjects.back().insert(key).second) {
                throw DuplicateJsonKey(key);
            }
        }
        return true;
    };
    return nlohmann::json::parse(text.begin(), text.end(), callback);
}

bool isValidUtf8(std::string_view text)
{
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    std::size_t i = 0;
    while (i < n) {
        const unsigned c = s[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        int extra = 0;
        unsigned cp = 0;
        if ((c & 0xE0) == 0xC0) {
            extra = 1;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            extra = 2;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            extra = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (i + static_cast<std::size_t>(extra) >= n) {
            return false;
        }
        for (int k = 1; k <= extra; ++k) {
            const unsigned cc = s[i + static_cast<std::size_t>(k)];
            if ((cc & 0xC0) != 0x80) {
                return false;
            }
            cp = (cp << 6) | (cc & 0x3F);
        }
        static constexpr unsigned kMinForLength[] = {0, 0x80, 0x800, 0x10000};
        if (cp < kMinForLength[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            return false;
        }
        i += static_cast<std::size_t>(extra) + 1;
    }
    return true;
}

} // namespace spark
