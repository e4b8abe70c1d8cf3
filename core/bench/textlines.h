#pragma once

#include <string_view>
#include <vector>

namespace spark {

/// @brief The lines of @p text without their '\n' (a final line without one included), as views into
/// @p text. Line i of the result is line i + 1 of the file, so importers can name it in their errors.
std::vector<std::string_view> splitLines(std::string_view text);

} // namespace spark
