#include "core/quant/quantscheme.h"

#include "core/quant/quanterror.h"

namespace spark {

bool QuantScheme::isValid() const
{
    const bool bitsOk = bits == 4 || bits == 8;
    const bool groupOk = groupSize == 32 || groupSize == 64 || groupSize == 128 || groupSize == -1;
    return bitsOk && groupOk;
}

void QuantScheme::validate() const
{
    if (!isValid()) {
        throw QuantError(QuantErrorKind::InvalidScheme,
                         "unsupported scheme: bits " + std::to_string(bits) + ", group " +
                             std::to_string(groupSize) + " (bits must be 4 or 8, group 32, 64, 128 or -1)");
    }
}

std::size_t QuantScheme::groupsPerRow(std::size_t cols) const
{
    if (perChannel()) {
        return 1;
    }
    const auto g = static_cast<std::size_t>(groupSize);
    return (cols + g - 1) / g;
}

bool QuantScheme::dividesColumns(std::size_t cols) const
{
    return cols > 0 && (perChannel() || cols % static_cast<std::size_t>(groupSize) == 0);
}

bool QuantScheme::acceptsShape(std::uint64_t out, std::uint64_t in) const
{
    return out > 0 && out % 64 == 0 && dividesColumns(static_cast<std::size_t>(in));
}

std::string QuantScheme::label() const
{
    return "w" + std::to_string(bits) + " " +
           (perChannel() ? std::string("channel") : "g" + std::to_string(groupSize));
}

} // namespace spark
