#pragma once

#include "core/plan/planoptions.h"

#include <QString>
#include <QStringList>
#include <optional>

namespace spark {

/// @brief What the user changed in the plan editor: the preset and the entries added to it, the default
/// scheme and rounding with their rules, and the target layer count. A value type, so that undo can store the
/// state before and after each edit.
struct PlanEdits
{
    QString preset = QStringLiteral("auto");
    QStringList targets; ///< added to the preset's targets
    QStringList ignore;  ///< added to the preset's ignore entries
    /// Scheme rules "ENTRY=SCHEME" after the preset's, in order (later rules win).
    QStringList schemes;
    /// The scheme of modules the targets select and no rule assigns (an integer symmetric scheme).
    QString defaultScheme = QStringLiteral("W4A16");
    /// The rounding method of quantized modules no rounding rule names ("rtn", "mse" or "range").
    QString rounding = QStringLiteral("rtn");
    /// Rounding rules "ENTRY=METHOD", in order (later rules win).
    QStringList roundings;
    std::optional<int> targetLayers;
    /// The budget whose allocation gave the last scheme rules (Budget tab); a record saved with the plan.
    /// PlanController::edit() drops it when anything else changes.
    std::optional<PlanBudget> budget;

    bool operator==(const PlanEdits&) const = default;
};

} // namespace spark
