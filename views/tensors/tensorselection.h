#pragma once

#include <QString>

namespace spark {

/// @brief What the Tensors tab's current row stands for. The detail panel and its sections follow it: a
/// tensor row shows the tensor, a module row the module (its tensors, the plan's decision and lint, its
/// weight's error), a layer row the layer.
struct TensorSelection
{
    enum Kind { None, Tensor, Module, Group };

    Kind kind = None;
    QString name;   ///< the tensor, module ("layers.0.mlp.down_proj") or group ("layers.0"); empty for None
    QString tensor; ///< the tensor whose data the sections show: the tensor itself, a module's weight (or
                    ///< first tensor); empty for a group

    bool isEmpty() const { return kind == None; }
    bool operator==(const TensorSelection&) const = default;
};

} // namespace spark
