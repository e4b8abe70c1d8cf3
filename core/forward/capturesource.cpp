#include "core/forward/capturesource.h"

#include "core/forward/draftspec.h"

#include <algorithm>
#include <cstring>

namespace spark {

const TensorInfo* captureTensor(const SafetensorsFile& file, const char* name,
                                const std::vector<DType>& dtypes, std::size_t dims, bool required)
{
    const auto* t = file.find(name);
    if (t == nullptr) {
        if (required) {
            throw ForwardInputError(file.path().string(), name, "missing");
        }
        return nullptr;
    }
    if (std::find(dtypes.begin(), dtypes.end(), t->dtype) == dtypes.end()) {
        throw ForwardInputError(file.path().string(), name,
                                "has dtype " + std::string(dtypeName(t->dtype)) +
                                    ", not one this format allows");
    }
    if (t->shape.size() != dims) {
        throw ForwardInputError(file.path().string(), name,
                                "has shape " + t->shapeText() + ", expected " + std::to_string(dims) +
                                    " dimensions");
    }
    return t;
}

CaptureColumn columnRows(const SafetensorsFile& file, const TensorInfo* tensor, std::int64_t begin,
                         std::int64_t count)
{
    if (tensor == nullptr) {
        return {};
    }
    const auto rows = tensor->shape.empty() ? 1 : tensor->shape[0];
    const auto rowBytes = rows == 0 ? 0 : tensor->byteSize() / rows;
    return {file.bytes(*tensor).subspan(static_cast<std::size_t>(begin) * rowBytes,
                                        static_cast<std::size_t>(count) * rowBytes),
            tensor->dtype};
}

void HiddenStateTensors::place(const SafetensorsFile& file, std::int64_t begin, std::int64_t count,
                               CapturePart& part) const
{
    part.layers = static_cast<std::int64_t>(hidden->shape[1]);
    part.hidden = columnRows(file, hidden, begin, count);
    if (scales != nullptr) {
        part.scales = scalePerRow ? columnRows(file, scales, begin, count)
                                  : CaptureColumn{file.bytes(*scales), scales->dtype};
        part.scalePerRow = scalePerRow;
        part.scalePerLayer = scalePerLayer;
    }
}

HiddenStateTensors hiddenStateTensors(const SafetensorsFile& file)
{
    HiddenStateTensors out;
    out.hidden = captureTensor(file, "hidden_states",
                               {DType::BF16, DType::F16, DType::F32, DType::F8_E4M3, DType::F8_E5M2}, 3);
    const auto* scales = file.find("hidden_states_scales");
    const auto* hidden = out.hidden;
    if (hidden->dtype != DType::F8_E4M3 && hidden->dtype != DType::F8_E5M2) {
        if (scales != nullptr) {
            throw ForwardInputError(file.path().string(), "hidden_states_scales",
                                    "present, but hidden_states are " +
                                        std::string(dtypeName(hidden->dtype)) + ", not FP8");
        }
        return out;
    }
    if (scales == nullptr) {
        throw ForwardInputError(file.path().string(), "hidden_states_scales",
                                "missing: FP8 hidden states need their scales (speculators writes one per "
                                "token, shape [tokens, 1, 1])");
    }
    // One scale per token (speculators: [T, 1, 1]), per token and layer ([T, L, 1]) or for the whole file
    // ([1]): every shape that broadcasts like torch's against [T, L, H] without a per-channel dimension.
    std::vector<std::uint64_t> shape(3 - std::min<std::size_t>(3, scales->shape.size()), 1);
    shape.insert(shape.end(), scales->shape.begin(), scales->shape.end());
    const bool fits = scales->dtype == DType::F32 && shape.size() == 3 &&
                      (shape[0] == 1 || shape[0] == hidden->shape[0]) &&
                      (shape[1] == 1 || shape[1] == hidden->shape[1]) && shape[2] == 1;
    if (!fits) {
        throw ForwardInputError(file.path().string(), "hidden_states_scales",
                                "is " + std::string(dtypeName(scales->dtype)) + " " + scales->shapeText() +
                                    "; expected F32 [tokens, 1, 1] (or [tokens, layers, 1], [1]) for "
                                    "hidden_states " +
                                    hidden->shapeText());
    }
    out.scales = scales;
    out.scalePerRow = shape[0] > 1;
    out.scalePerLayer = shape[1] > 1;
    return out;
}

std::vector<std::int64_t> readIntegers(const CaptureColumn& column, std::int64_t count)
{
    const std::int64_t width = dtypeBits(column.dtype) / 8;
    std::vector<std::int64_t> out(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
        const std::byte* p = column.bytes.data() + i * width;
        switch (column.dtype) {
        case DType::I64:
            std::memcpy(&out[i], p, 8);
            break;
        case DType::I32: {
            std::int32_t v;
            std::memcpy(&v, p, 4);
            out[i] = v;
            break;
        }
        default:
            out[i] = static_cast<std::int64_t>(static_cast<std::uint8_t>(*p));
        }
    }
    return out;
}

std::vector<int> parseLayerIds(const std::string& file, const std::string& field, const nlohmann::json& value)
{
    if (!value.is_array() || value.empty()) {
        throw ForwardInputError(file, field, "must be a non-empty JSON list of layer ids");
    }
    std::vector<int> ids;
    for (const auto& v : value) {
        if (!v.is_number_integer() || v.get<int>() < 0) {
            throw ForwardInputError(file, field, "must list non-negative integers");
        }
        ids.push_back(v.get<int>());
    }
    return ids;
}

} // namespace spark
