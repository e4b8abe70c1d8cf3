#include "core/io/safetensorslayout.h"

#include "core/io/safetensorsheader.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace spark {

std::uint64_t TensorSpec::byteSize() const
{
    std::uint64_t n = 1;
    for (auto d : shape) {
        n *= d;
    }
    return dataBytes(dtype, n);
}

SafetensorsLayout layoutSafetensors(std::vector<TensorSpec> tensors,
                                    const std::map<std::string, std::string>& metadata)
{
    std::sort(tensors.begin(), tensors.end(), [](const TensorSpec& a, const TensorSpec& b) {
        if (a.dtype != b.dtype) {
            return a.dtype > b.dtype;
        }
        return a.name < b.name;
    });
    SafetensorsLayout layout;
    // nlohmann's ordered_json keeps insertion order; serde_json (the reference) writes the header from a
    // map ordered the same way as the data (metadata first), so order is reproduced explicitly.
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata.empty()) {
        header["__metadata__"] = metadata;
    }
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const auto& t = tensors[i];
        if (i > 0 && tensors[i - 1].name == t.name) {
            throw std::invalid_argument("duplicate tensor name '" + t.name + "'");
        }
        if (t.name == "__metadata__") {
            throw std::invalid_argument("'__metadata__' cannot be a tensor name");
        }
        TensorInfo info{t.name, t.dtype, t.shape, offset, offset + t.byteSize()};
        header[t.name] = {{"dtype", std::string(dtypeName(t.dtype))},
                          {"shape", t.shape},
                          {"data_offsets", {info.begin, info.end}}};
        offset = info.end;
        layout.tensors.push_back(std::move(info));
    }
    layout.dataBytes = offset;
    layout.header = header.dump();
    layout.header.append((8 - layout.header.size() % 8) % 8, ' ');
    if (layout.header.size() > kMaxHeaderSize) {
        throw std::invalid_argument("header of " + std::to_string(layout.header.size()) +
                                    " bytes exceeds the 100000000-byte limit");
    }
    return layout;
}

} // namespace spark
