#pragma once

#include "views/tensors/tensorrow.h"
#include "views/tensors/tensorrowresult.h"

#include <QModelIndex>
#include <QVariant>
#include <Qt>

namespace spark {

/// @brief The columns and item roles shared by the flat and the grouped tensor models, so that both
/// show, sort and filter the same way and the views can swap between them.
class TensorColumns
{
  public:
    enum Column : int { Name, Role, DType, Shape, Params, Bytes, Share, Decision, RelError, MaxError, Count };

    /// Custom item roles. SortRole gives numbers as numbers (qulonglong/double) and nothing for missing
    /// values, so that the proxy never compares "10 MiB" with "9 KiB" as text.
    enum ItemRole : int {
        SortRole = Qt::UserRole + 1,
        TensorNameRole, ///< full tensor name on tensor items; empty on group and module items
        NodeKindRole,   ///< a NodeKind
        RowRole,        ///< index into DocumentSnapshot::rows (tensor items), else -1
        NodeNameRole,   ///< full name of the item: tensor, module ("layers.0.mlp.down_proj") or group
    };
    enum NodeKind : int { GroupNode, ModuleNode, TensorNode };

    static constexpr int FirstAnalysisColumn = Decision;
    static constexpr int LastAnalysisColumn = MaxError;

    static QString title(int column);
    static QString toolTip(int column);
    static bool isNumeric(int column);
    /// @brief Right-aligned for numeric columns (cells and headers), nothing otherwise.
    static QVariant alignment(int column);
    /// @brief The header of @p column for @p role (title, tool tip, alignment); invalid for other roles.
    static QVariant header(int column, int role);

    /// @brief Display text of a tensor cell.
    static QVariant display(const TensorRow& row, const TensorRowResult* analysis, int column);
    /// @brief Sort key of a tensor cell (invalid for a missing value).
    static QVariant sortKey(const TensorRow& row, const TensorRowResult* analysis, int column);
    /// @brief Display text of an analysis cell alone (decision, rel. error, max error).
    static QVariant analysisDisplay(const TensorRowResult* analysis, int column);
    static QVariant analysisSortKey(const TensorRowResult* analysis, int column);
    /// @brief Tooltip of an analysis cell: where a Rel. error that is not the analysis' own comes from (the
    /// sweep, a fused set) or why there is none ("not measured: SCHEME"); invalid otherwise.
    static QVariant analysisToolTip(const TensorRowResult* analysis, int column);
    /// @brief The decision checkbox of a Linear weight the plan has decided on (checked: quantized);
    /// an invalid QVariant for everything else. Toggling it asks the plan to flip the module.
    static QVariant decisionCheckState(const TensorRow& row, const TensorRowResult* analysis);
    /// @brief @p base plus ItemIsUserCheckable when @p index is a decision cell with a checkbox, disabled
    /// when the preset keeps the module (@p analysis: the cell's row).
    static Qt::ItemFlags decisionFlags(Qt::ItemFlags base, const QModelIndex& index,
                                       const TensorRowResult* analysis);
    /// @brief True when setData(@p value, @p role) on @p index is a user toggle of a decision checkbox.
    static bool isDecisionToggle(const QModelIndex& index, const QVariant& value, int role);
    /// @brief True when setData(@p index, @p value, @p role) picks another scheme in the Decision column
    /// (Qt::EditRole text: a scheme name, "BF16" to keep).
    static bool isDecisionEdit(const QModelIndex& index, const QVariant& value, int role);
};

} // namespace spark
