#include "core/audit/storedlayout.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

namespace spark {
namespace {

/// No Linear of a real model has a side this long; it also keeps out·in far from overflowing.
constexpr std::uint64_t kMaxSide = std::uint64_t{1} << 31;

constexpr const char* kQuantSuffixes[] = {"weight_packed",     "weight_scale", "weight_shape",
                                          "weight_zero_point", "weight_g_idx", "weight_global_scale",
                                          "input_scale"};

std::string shapeText(const std::vector<std::uint64_t>& shape)
{
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        text += (i ? ", " : "") + std::to_string(shape[i]);
    }
    return text + "]";
}

std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b)
{
    return (a + b - 1) / b;
}

class LayoutReader
{
  public:
    LayoutReader(const Checkpoint& checkpoint, const std::string& prefix, StoredLayout& layout)
        : m_checkpoint(checkpoint), m_prefix(prefix), m_layout(layout)
    {
    }

    const CheckpointTensor* find(const std::string& suffix)
    {
        m_expected.insert(suffix);
        return m_checkpoint.find(m_prefix + "." + suffix);
    }

    void issue(const std::string& rule, const std::string& message)
    {
        m_layout.issues.push_back({rule, message});
    }

    /// A required tensor: present, of one of @p dtypes; reports and returns nullptr otherwise.
    const CheckpointTensor* require(const std::string& suffix, std::initializer_list<DType> dtypes,
                                    const std::string& why)
    {
        const auto* t = find(suffix);
        if (!t) {
            issue("tensor-missing", why + " needs " + suffix + ", which is missing");
            return nullptr;
        }
        if (std::find(dtypes.begin(), dtypes.end(), t->info.dtype) == dtypes.end()) {
            std::string names;
            for (const auto d : dtypes) {
                names += (names.empty() ? "" : "/") + std::string(dtypeName(d));
            }
            issue("tensor-dtype",
                  suffix + " is " + std::string(dtypeName(t->info.dtype)) + ", " + why + " stores " + names);
            return nullptr;
        }
        return t;
    }

    void expectShape(const CheckpointTensor* t, const std::vector<std::vector<std::uint64_t>>& shapes,
                     const std::string& why)
    {
        if (!t || std::find(shapes.begin(), shapes.end(), t->info.shape) != shapes.end()) {
            return;
        }
        issue("tensor-shape", moduleSuffix(*t) + " has shape " + t->info.shapeText() + ", " + why +
                                  " needs " + shapeText(shapes.front()));
    }

    /// Quantization tensors of the module this layout does not write.
    void reportUnexpected(bool allowFloatWeight)
    {
        for (const char* suffix : kQuantSuffixes) {
            if (!m_expected.contains(suffix) && m_checkpoint.find(m_prefix + "." + suffix)) {
                issue(
                    std::string(suffix) == "weight_zero_point" ? "zero-point-symmetric" : "tensor-unexpected",
                    std::string(suffix) == "weight_zero_point"
                        ? "weight_zero_point on a symmetric scheme: vLLM creates no such parameter and fails "
                          "to load it (compressed-tensors drops it, _remove_symmetric_zp)"
                        : std::string(suffix) + " is not part of this scheme's layout");
            }
        }
        if (!allowFloatWeight && !m_expected.contains("weight")) {
            if (m_checkpoint.find(m_prefix + ".weight")) {
                issue("tensor-unexpected", "a .weight is left beside the quantized tensors");
            }
        }
    }

  private:
    std::string moduleSuffix(const CheckpointTensor& t) const
    {
        return t.info.name.substr(m_prefix.size() + 1);
    }

    const Checkpoint& m_checkpoint;
    const std::string& m_prefix;
    StoredLayout& m_layout;
    std::set<std::string> m_expected;
};

bool sane(std::uint64_t side)
{
    return side > 0 && side <= kMaxSide;
}

/// pack-quantized: weight_packed I32, weight_shape I64 [2] (format-spec §2.1). Sets out/in.
bool readPackedGeometry(const Checkpoint& checkpoint, LayoutReader& reader, const QuantArgs& args,
                        int ctMinor, StoredLayout& layout)
{
    const auto* packed = reader.require("weight_packed", {DType::I32}, "pack-quantized");
    const auto* shape = reader.require("weight_shape", {DType::I64, DType::I32}, "pack-quantized");
    if (!packed) {
        return false;
    }
    if (packed->info.shape.size() != 2 || !sane(packed->info.shape[0]) || !sane(packed->info.shape[1])) {
        reader.issue("tensor-shape",
                     "weight_packed has shape " + packed->info.shapeText() + ", not [out, words]");
        return false;
    }
    layout.out = packed->info.shape[0];
    const auto bits = static_cast<std::uint64_t>(args.bits);
    if (shape && shape->info.shape == std::vector<std::uint64_t>{2}) {
        const auto bytes = checkpoint.bytes(*shape);
        std::int64_t dims[2] = {0, 0};
        if (shape->info.dtype == DType::I64) {
            std::memcpy(dims, bytes.data(), 16);
        } else {
            std::int32_t small[2];
            std::memcpy(small, bytes.data(), 8);
            dims[0] = small[0];
            dims[1] = small[1];
        }
        if (dims[0] <= 0 || dims[1] <= 0 || !sane(static_cast<std::uint64_t>(dims[0])) ||
            !sane(static_cast<std::uint64_t>(dims[1]))) {
            reader.issue("weight-shape", "weight_shape holds [" + std::to_string(dims[0]) + ", " +
                                             std::to_string(dims[1]) + "], not a Linear's [out, in]");
            return false;
        }
        if (static_cast<std::uint64_t>(dims[0]) != layout.out) {
            reader.issue("weight-shape", "weight_shape says " + std::to_string(dims[0]) +
                                             " rows, weight_packed has " + std::to_string(layout.out));
            return false;
        }
        layout.in = static_cast<std::uint64_t>(dims[1]);
    } else {
        if (shape) {
            reader.issue("tensor-shape", "weight_shape has shape " + shape->info.shapeText() + ", needs [2]");
        }
        return false;
    }
    // CT 0.18 packs densely across words (ceil(in·bits/32)); older versions put floor(32/bits) values in a
    // word. Both agree for 1, 2, 4 and 8 bits.
    const auto dense = ceilDiv(layout.in * bits, 32);
    const auto old = ceilDiv(layout.in, 32 / bits);
    const auto words = packed->info.shape[1];
    if (words == dense && words == old) {
        layout.oldPacking =
            32 % bits != 0 && ctMinor < 18; // same word count: the writer's CT version decides
    } else if (words == dense) {
        layout.oldPacking = false;
    } else if (words == old) {
        layout.oldPacking = true;
    } else {
        reader.issue("tensor-shape",
                     "weight_packed has " + std::to_string(words) + " words per row, " +
                         std::to_string(args.bits) + "-bit weights of " + std::to_string(layout.in) +
                         " columns need " + std::to_string(dense) +
                         (old != dense ? " (or " + std::to_string(old) + " before CT 0.18)" : ""));
        return false;
    }
    return true;
}

} // namespace

bool isQuantizedTensorSuffix(const std::string& suffix)
{
    return std::find(std::begin(kQuantSuffixes), std::end(kQuantSuffixes), suffix) !=
           std::end(kQuantSuffixes);
}

DType configWeightDtype(const nlohmann::json& config)
{
    const nlohmann::json* source = &config;
    if (config.is_object() && config.contains("transformer_layer_config") &&
        config["transformer_layer_config"].is_object() && !config.contains("torch_dtype") &&
        !config.contains("dtype")) {
        source = &config["transformer_layer_config"];
    }
    for (const char* key : {"torch_dtype", "dtype"}) {
        if (source->is_object() && source->contains(key) && (*source)[key].is_string()) {
            const auto text = (*source)[key].get<std::string>();
            if (text == "float16") {
                return DType::F16;
            }
            if (text == "float32") {
                return DType::F32;
            }
        }
    }
    return DType::BF16;
}

int compressedTensorsMinor(const nlohmann::json& quantizationConfig)
{
    if (!quantizationConfig.is_object() || !quantizationConfig.contains("version") ||
        !quantizationConfig["version"].is_string()) {
        return 18;
    }
    const auto text = quantizationConfig["version"].get<std::string>();
    const auto dot = text.find('.');
    if (dot == std::string::npos || !text.starts_with("0.")) {
        return 18;
    }
    int minor = 0;
    for (std::size_t i = dot + 1;
         i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && minor < 1000; ++i) {
        minor = minor * 10 + (text[i] - '0');
    }
    return minor;
}

StoredLayout readStoredLayout(const Checkpoint& checkpoint, const std::string& prefix, const QuantArgs& args,
                              DType configDtype, int ctMinorVersion)
{
    StoredLayout layout;
    for (const char* suffix : kQuantSuffixes) {
        if (const auto* t = checkpoint.find(prefix + "." + suffix)) {
            layout.storedBytes += t->info.byteSize();
        }
    }
    if (const auto* w = checkpoint.find(prefix + ".weight")) {
        layout.storedBytes += w->info.byteSize();
    }
    LayoutReader reader(checkpoint, prefix, layout);
    if (args.bits == 0) {
        reader.issue("group-scheme", "its config group's weights cannot be read");
        return layout;
    }
    const std::string& format = args.format;
    const bool nvfp4 = format == "nvfp4-pack-quantized";
    const bool packed = format == "pack-quantized";
    const bool unpacked =
        format == "float-quantized" || format == "naive-quantized" || format == "int-quantized";
    bool geometry = false;
    if (packed) {
        geometry = readPackedGeometry(checkpoint, reader, args, ctMinorVersion, layout);
    } else if (nvfp4) {
        const auto* w = reader.require("weight_packed", {DType::U8}, "nvfp4-pack-quantized");
        if (w && w->info.shape.size() == 2 && sane(w->info.shape[0]) && sane(w->info.shape[1])) {
            layout.out = w->info.shape[0];
            layout.in = 2 * w->info.shape[1];
            geometry = true;
        } else if (w) {
            reader.issue("tensor-shape",
                         "weight_packed has shape " + w->info.shapeText() + ", not [out, in/2]");
        }
    } else if (unpacked) {
        const auto dtype = args.type == "float" ? DType::F8_E4M3 : DType::I8;
        const auto* w =
            reader.require("weight", {dtype}, format + " " + args.type + std::to_string(args.bits));
        if (w && w->info.shape.size() == 2 && sane(w->info.shape[0]) && sane(w->info.shape[1])) {
            layout.out = w->info.shape[0];
            layout.in = w->info.shape[1];
            geometry = true;
        } else if (w) {
            reader.issue("tensor-shape", "weight has shape " + w->info.shapeText() + ", not [out, in]");
        }
    } else {
        reader.issue("group-scheme", "format '" + format + "' is not one the audit reads");
        return layout;
    }

    const auto* scale =
        nvfp4 ? reader.require("weight_scale", {DType::F8_E4M3}, "nvfp4-pack-quantized")
              : reader.require("weight_scale", {DType::BF16, DType::F16, DType::F32}, args.describe());
    layout.weightDtype = scale && isQuantizableFloat(scale->info.dtype) ? scale->info.dtype : configDtype;
    if (!geometry) {
        reader.reportUnexpected(unpacked);
        return layout;
    }
    std::uint64_t groups = 1;
    if (args.strategy == "group" || args.strategy == "tensor_group") {
        const auto g = static_cast<std::uint64_t>(args.groupSize);
        if (layout.in % g != 0) {
            // CT raises "tensor column shape must be divisble by the given group_size" (format-spec §2.4).
            reader.issue("group-divides", std::to_string(layout.in) +
                                              " columns do not divide into groups of " + std::to_string(g));
        }
        groups = ceilDiv(layout.in, g);
    } else if (args.strategy != "channel" && args.strategy != "tensor") {
        reader.issue("group-scheme", "weights strategy '" + args.strategy + "' is not read by the audit");
    }
    const bool tensorWise = args.strategy == "tensor";
    const std::vector<std::vector<std::uint64_t>> scaleShapes =
        tensorWise ? std::vector<std::vector<std::uint64_t>>{{1}, {1, 1}}
                   : std::vector<std::vector<std::uint64_t>>{{layout.out, groups}};
    reader.expectShape(scale, scaleShapes, args.describe());
    if (!args.symmetric) {
        const std::uint64_t rows =
            packed ? (layout.oldPacking ? ceilDiv(layout.out, 32 / static_cast<std::uint64_t>(args.bits))
                                        : ceilDiv(layout.out * static_cast<std::uint64_t>(args.bits), 32))
                   : layout.out;
        const auto* zp =
            packed ? reader.require("weight_zero_point", {DType::I32}, "an asymmetric scheme")
                   : reader.require("weight_zero_point", {DType::I8, DType::I32}, "an asymmetric scheme");
        reader.expectShape(zp,
                           tensorWise ? scaleShapes : std::vector<std::vector<std::uint64_t>>{{rows, groups}},
                           "zero points packed along the output dimension");
    }
    if (nvfp4) {
        const auto* global = reader.require("weight_global_scale", {DType::F32}, "nvfp4-pack-quantized");
        reader.expectShape(global, {{1}}, "nvfp4-pack-quantized");
    }
    if (args.actorderGroup) {
        const auto* gidx = reader.require("weight_g_idx", {DType::I32}, "actorder group");
        reader.expectShape(gidx, {{layout.in}}, "actorder group");
    }
    if (args.inputActivations && !args.dynamicActivations) {
        reader.find("input_scale"); // static activation scale: allowed, not needed to read weights
    }
    reader.reportUnexpected(unpacked);
    return layout;
}

} // namespace spark
