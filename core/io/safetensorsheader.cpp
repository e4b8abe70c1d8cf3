#include "core/io/safetensorsheader.h"

#include "core/io/ioerror.h"
#include "core/io/strictjson.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace spark {
namespace {

using nlohmann::json;

[[noreturn]] void fail(IoErrorKind kind, const std::string& file, const std::string& message,
                       const std::string& tensor = {})
{
    throw IoError(kind, file, message, tensor);
}

std::uint64_t readU64(const json& value, const std::string& file, const std::string& tensor, const char* what)
{
    if (!value.is_number_unsigned()) {
        fail(IoErrorKind::InvalidHeaderDeserialization, file,
             std::string("header: '") + what + "' must hold non-negative integers", tensor);
    }
    return value.get<std::uint64_t>();
}

TensorInfo parseTensorEntry(const std::string& name, const json& entry, const std::string& file)
{
    if (!entry.is_object()) {
        fail(IoErrorKind::InvalidHeaderDeserialization, file, "header: tensor entry is not an object", name);
    }
    TensorInfo info;
    info.name = name;

    const auto dtypeIt = entry.find("dtype");
    if (dtypeIt == entry.end() || !dtypeIt->is_string()) {
        fail(IoErrorKind::InvalidHeaderDeserialization, file, "header: missing or non-string 'dtype'", name);
    }
    const auto dtypeText = dtypeIt->get<std::string>();
    const auto dtype = parseDType(dtypeText);
    if (!dtype) {
        fail(IoErrorKind::InvalidHeaderDeserialization, file, "header: unknown dtype '" + dtypeText + "'",
             name);
    }
    info.dtype = *dtype;

    const auto shapeIt = entry.find("shape");
    if (shapeIt == entry.end() || !shapeIt->is_array()) {
        fail(IoErrorKind::InvalidHeaderDeserialization, file, "header: missing or non-array 'shape'", name);
    }
    for (const auto& dim : *shapeIt) {
        info.shape.push_back(readU64(dim, file, name, "shape"));
    }

    const auto offsetsIt = entry.find("data_offsets");
    if (offsetsIt == entry.end() || !offsetsIt->is_array() || offsetsIt->size() != 2) {
        fail(IoErrorKind::InvalidHeaderDeserialization, file,
             "header: 'data_offsets' must be an array of two integers", name);
    }
    info.begin = readU64((*offsetsIt)[0], file, name, "data_offsets");
    info.end = readU64((*offsetsIt)[1], file, name, "data_offsets");
    return info;
}

bool checkedMul(std::uint64_t a, std::uint64_t b, std::uint64_t& out)
{
    return !__builtin_mul_overflow(a, b, &out);
}

} // namespace

std::uint64_t readHeaderLength(std::span<const std::byte> head, std::uint64_t fileSize,
                               const std::string& file)
{
    if (fileSize < 8 || head.size() < 8) {
        fail(IoErrorKind::HeaderTooSmall, file,
             "file is " + std::to_string(fileSize) + " bytes, too small for a safetensors header (8 bytes)");
    }
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) {
        n = (n << 8) | static_cast<std::uint8_t>(head[static_cast<std::size_t>(i)]);
    }
    if (n > kMaxHeaderSize) {
        fail(IoErrorKind::HeaderTooLarge, file,
             "header length " + std::to_string(n) + " exceeds the 100000000-byte limit");
    }
    if (8 + n > fileSize) {
        fail(IoErrorKind::InvalidHeaderLength, file,
             "header length " + std::to_string(n) + " runs past the end of the " + std::to_string(fileSize) +
                 "-byte file (truncated?)");
    }
    return n;
}

SafetensorsHeader parseSafetensorsHeader(std::string_view headerJson, std::uint64_t fileSize,
                                         const std::string& file)
{
    if (!isValidUtf8(headerJson)) {
        fail(IoErrorKind::InvalidHeader, file, "header is not valid UTF-8");
    }
    json root;
    try {
        root = parseStrictJson(headerJson);
    } catch (const DuplicateJsonKey& e) {
        fail(IoErrorKind::DuplicateKey, file, "header has a duplicate key '" + e.key() + "'", e.key());
    } catch (const json::exception& e) {
        fail(IoErrorKind::InvalidHeaderDeserialization, file,
             std::string("header is not valid JSON: ") + e.what());
    }
    if (!root.is_object()) {
        fail(IoErrorKind::InvalidHeaderDeserialization, file, "header is not a JSON object");
    }

    SafetensorsHeader header;
    header.headerSize = headerJson.size();
    for (const auto& [key, value] : root.items()) {
        if (key == "__metadata__") {
            if (!value.is_object()) {
                fail(IoErrorKind::InvalidHeaderDeserialization, file,
                     "header: '__metadata__' is not an object");
            }
            for (const auto& [mk, mv] : value.items()) {
                if (!mv.is_string()) {
                    fail(IoErrorKind::InvalidHeaderDeserialization, file,
                         "header: '__metadata__' value of '" + mk + "' is not a string");
                }
                header.metadata[mk] = mv.get<std::string>();
            }
            continue;
        }
        header.tensors.push_back(parseTensorEntry(key, value, file));
    }

    // The reference validates tensors in data-offset order: each must start where the previous ended.
    std::stable_sort(header.tensors.begin(), header.tensors.end(),
                     [](const TensorInfo& a, const TensorInfo& b) {
                         return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
                     });
    std::uint64_t start = 0;
    for (const auto& t : header.tensors) {
        if (t.begin != start || t.end < t.begin) {
            const std::string why =
                t.end < t.begin ? "ends before it begins"
                : t.begin > start
                    ? "leaves a gap before it (expected offset " + std::to_string(start) + ")"
                    : "overlaps the previous tensor (expected offset " + std::to_string(start) + ")";
            fail(IoErrorKind::InvalidOffset, file,
                 "invalid data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                     "]: " + why,
                 t.name);
        }
        start = t.end;
        std::uint64_t numel = 1;
        for (auto d : t.shape) {
            if (!checkedMul(numel, d, numel)) {
                fail(IoErrorKind::ValidationOverflow, file, "shape " + t.shapeText() + " overflows", t.name);
            }
        }
        std::uint64_t bits = 0;
        if (!checkedMul(numel, static_cast<std::uint64_t>(dtypeBits(t.dtype)), bits)) {
            fail(IoErrorKind::ValidationOverflow, file, "shape " + t.shapeText() + " overflows", t.name);
        }
        if (bits % 8 != 0) {
            fail(IoErrorKind::MisalignedSlice, file,
                 std::to_string(numel) + " elements of " + std::string(dtypeName(t.dtype)) +
                     " do not fill whole bytes",
                 t.name);
        }
        if (t.end - t.begin != bits / 8) {
            fail(IoErrorKind::TensorInvalidInfo, file,
                 "data_offsets span " + std::to_string(t.end - t.begin) + " bytes but " +
                     std::string(dtypeName(t.dtype)) + " " + t.shapeText() + " needs " +
                     std::to_string(bits / 8),
                 t.name);
        }
    }
    const std::uint64_t expected = start + 8 + header.headerSize;
    if (expected != fileSize) {
        fail(IoErrorKind::MetadataIncompleteBuffer, file,
             "file is " + std::to_string(fileSize) + " bytes but the header describes " +
                 std::to_string(expected) + (fileSize > expected ? " (trailing bytes)" : " (truncated)"));
    }
    return header;
}

SafetensorsHeader parseSafetensorsImage(std::span<const std::byte> image, const std::string& file)
{
    const auto n = readHeaderLength(image, image.size(), file);
    const std::string_view text(reinterpret_cast<const char*>(image.data()) + 8, n);
    return parseSafetensorsHeader(text, image.size(), file);
}

} // namespace spark
