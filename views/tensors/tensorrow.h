#pragma once

#include "core/plan/draftmodule.h"

#include <QString>
#include <cstdint>
#include <vector>

namespace spark {

/// @brief One tensor as the GUI shows it: everything derived from the header once, in the loader's
/// thread, so that models only look values up.
struct TensorRow
{
    QString name;                         ///< "layers.0.mlp.down_proj.weight"
    QString module;                       ///< "layers.0.mlp.down_proj"
    QString group;                        ///< "layers.0", or the first component ("fc", "lm_head")
    ModuleRole role = ModuleRole::Buffer; ///< of its module, as the plan layer describes it
    QString dtype;                        ///< safetensors spelling: "BF16"
    std::vector<std::uint64_t> shape;
    QString shapeText; ///< "[4096, 4096]"
    std::uint64_t params = 0;
    std::uint64_t bytes = 0;
    double share = 0.0;      ///< bytes / checkpoint total bytes, 0..1
    QString file;            ///< shard file name
    std::uint64_t begin = 0; ///< data offsets relative to the shard's data section
    std::uint64_t end = 0;
    std::uint64_t dataStart = 0; ///< absolute file offset of the data section (8 + header length)
    /// The scheme its module is stored as ("W4A16", "BF16") when the checkpoint is already quantized; empty
    /// for a BF16 draft (whose Decision column shows the plan's decision instead).
    QString storedScheme;
};

} // namespace spark
