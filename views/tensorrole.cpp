#include "views/tensorrole.h"

#include <string_view>

namespace spark {

namespace {

bool endsWith(std::string_view text, std::string_view suffix)
{
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// True when any dot-separated component is "lm_head" or ends with "_head" ("markov_head", "confidence_head").
bool hasHeadComponent(std::string_view name)
{
    std::size_t start = 0;
    while (start <= name.size()) {
        const auto dot = name.find('.', start);
        const auto part =
            name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
        if (endsWith(part, "_head")) {
            return true;
        }
        if (dot == std::string_view::npos) {
            break;
        }
        start = dot + 1;
    }
    return false;
}

} // namespace

TensorRole guessTensorRole(const std::string& name, const std::vector<std::uint64_t>& shape)
{
    if (name.find("embed_tokens") != std::string::npos) {
        return TensorRole::Embedding;
    }
    if (hasHeadComponent(name)) {
        return TensorRole::Head;
    }
    if (endsWith(name, ".weight")) {
        if (shape.size() == 2) {
            return TensorRole::Linear;
        }
        if (shape.size() == 1) {
            return TensorRole::Norm;
        }
    }
    return TensorRole::Buffer;
}

QString tensorRoleName(TensorRole role)
{
    switch (role) {
    case TensorRole::Linear:
        return QStringLiteral("linear");
    case TensorRole::Norm:
        return QStringLiteral("norm");
    case TensorRole::Embedding:
        return QStringLiteral("embedding");
    case TensorRole::Head:
        return QStringLiteral("head");
    case TensorRole::Buffer:
        break;
    }
    return QStringLiteral("buffer");
}

} // namespace spark
