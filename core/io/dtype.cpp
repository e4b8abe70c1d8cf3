#include "core/io/dtype.h"

#include <array>

namespace spark {
namespace {

struct DTypeEntry
{
    DType dtype;
    std::string_view name;
    int bits;
};

constexpr std::array kDTypes{
    DTypeEntry{DType::Bool, "BOOL", 8},
    DTypeEntry{DType::F4, "F4", 4},
    DTypeEntry{DType::F6_E2M3, "F6_E2M3", 6},
    DTypeEntry{DType::F6_E3M2, "F6_E3M2", 6},
    DTypeEntry{DType::U8, "U8", 8},
    DTypeEntry{DType::I8, "I8", 8},
    DTypeEntry{DType::F8_E5M2, "F8_E5M2", 8},
    DTypeEntry{DType::F8_E4M3, "F8_E4M3", 8},
    DTypeEntry{DType::F8_E8M0, "F8_E8M0", 8},
    DTypeEntry{DType::F8_E4M3FNUZ, "F8_E4M3FNUZ", 8},
    DTypeEntry{DType::F8_E5M2FNUZ, "F8_E5M2FNUZ", 8},
    DTypeEntry{DType::I16, "I16", 16},
    DTypeEntry{DType::U16, "U16", 16},
    DTypeEntry{DType::F16, "F16", 16},
    DTypeEntry{DType::BF16, "BF16", 16},
    DTypeEntry{DType::I32, "I32", 32},
    DTypeEntry{DType::U32, "U32", 32},
    DTypeEntry{DType::F32, "F32", 32},
    DTypeEntry{DType::C64, "C64", 64},
    DTypeEntry{DType::F64, "F64", 64},
    DTypeEntry{DType::I64, "I64", 64},
    DTypeEntry{DType::U64, "U64", 64},
};

const DTypeEntry& entry(DType dtype)
{
    return kDTypes[static_cast<std::size_t>(dtype)];
}

} // namespace

std::optional<DType> parseDType(std::string_view text)
{
    for (const auto& e : kDTypes) {
        if (e.name == text) {
            return e.dtype;
        }
    }
    return std::nullopt;
}

std::string_view dtypeName(DType dtype)
{
    return entry(dtype).name;
}

int dtypeBits(DType dtype)
{
    return entry(dtype).bits;
}

bool isQuantizableFloat(DType dtype)
{
    return dtype == DType::BF16 || dtype == DType::F16 || dtype == DType::F32;
}

bool isFloatingPoint(DType dtype)
{
    switch (dtype) {
    case DType::F4:
    case DType::F6_E2M3:
    case DType::F6_E3M2:
    case DType::F8_E5M2:
    case DType::F8_E4M3:
    case DType::F8_E8M0:
    case DType::F8_E4M3FNUZ:
    case DType::F8_E5M2FNUZ:
    case DType::F16:
    case DType::BF16:
    case DType::F32:
    case DType::F64:
        return true;
    default:
        return false;
    }
}

} // namespace spark
