#include "core/forward/activations.h"

#include <algorithm>

namespace spark {

Activations Activations::gather(const std::vector<std::int64_t>& indices) const
{
    Activations out(static_cast<std::int64_t>(indices.size()), cols);
    for (std::size_t i = 0; i < indices.size(); ++i) {
        std::copy_n(row(indices[i]), cols, out.row(static_cast<std::int64_t>(i)));
    }
    return out;
}

Activations Activations::columns(std::int64_t first, std::int64_t count) const
{
    Activations out(rows, count);
    for (std::int64_t r = 0; r < rows; ++r) {
        std::copy_n(row(r) + first, count, out.row(r));
    }
    return out;
}

} // namespace spark
