#pragma once

#include <QString>
#include <QStringList>
#include <optional>

namespace spark {

/// @brief What the user changed in the plan editor: the preset and the entries added to it, and the
/// target layer count. A value type, so that undo can store the state before and after each edit.
struct PlanEdits
{
    QString preset = QStringLiteral("auto");
    QStringList targets; ///< added to the preset's targets
    QStringList ignore;  ///< added to the preset's ignore entries
    std::optional<int> targetLayers;

    bool operator==(const PlanEdits&) const = default;
};

} // namespace spark
