#include "views/tensors/tensorcolumns.h"

#include "views/shared/formatting.h"

#include <QCoreApplication>
#include <QLocale>

namespace spark {

namespace {

QString tr(const char* text)
{
    return QCoreApplication::translate("spark::TensorColumns", text);
}

// Max error is an absolute difference in weight units; rel. error has its own spelling (formatRelError).
QString formatMaxError(double value)
{
    return QLocale().toString(value, 'g', 3);
}

} // namespace

QString TensorColumns::title(int column)
{
    switch (column) {
    case Name:
        return tr("Name");
    case Role:
        return tr("Role");
    case DType:
        return tr("DType");
    case Shape:
        return tr("Shape");
    case Params:
        return tr("Params");
    case Bytes:
        return tr("Bytes");
    case Share:
        return tr("Share");
    case Decision:
        return tr("Decision");
    case RelError:
        return tr("Rel. error");
    case MaxError:
        return tr("Max error");
    default:
        return {};
    }
}

QString TensorColumns::toolTip(int column)
{
    switch (column) {
    case Name:
        return tr("Tensor name as stored in the checkpoint. Grouped mode nests tensors under their layer and "
                  "module.");
    case Role:
        return tr("What the tensor is, guessed from name and shape: linear (2-D weight), norm (1-D weight), "
                  "embedding, head (lm_head and other *_head modules) or buffer (anything else).");
    case DType:
        return tr("Element type in the file (BF16, F32, ...).");
    case Shape:
        return tr("Tensor dimensions, outermost first.");
    case Params:
        return tr("Number of elements.");
    case Bytes:
        return tr("Bytes the tensor takes in the checkpoint.");
    case Share:
        return tr("Share of the checkpoint's total tensor bytes.");
    case Decision:
        return tr("What the quantization plan does with the tensor (quantize to W4A16 or keep as is). For an "
                  "already-quantized checkpoint: the scheme its module is stored as.");
    case RelError:
        return tr("Relative quantization error in percent: the Frobenius norm of (W − Q(W)) divided by that "
                  "of W, under the scheme the plan gives the module: from Analyze when it used that scheme, "
                  "else from the Budget tab's sweep (a fused q/k/v or gate/up set as a whole), else \"not "
                  "measured\". A kept module shows the analysis scheme's error. Lower is better. A layer "
                  "shows its worst tensor.");
    case MaxError:
        return tr("Largest absolute difference between a weight and its quantized value; filled in by "
                  "Analyze. A layer shows its worst tensor.");
    default:
        return {};
    }
}

bool TensorColumns::isNumeric(int column)
{
    return column == Params || column == Bytes || column == Share || column == RelError || column == MaxError;
}

QVariant TensorColumns::alignment(int column)
{
    return isNumeric(column) ? QVariant((Qt::AlignRight | Qt::AlignVCenter).toInt()) : QVariant();
}

QVariant TensorColumns::header(int column, int role)
{
    switch (role) {
    case Qt::DisplayRole:
        return title(column);
    case Qt::ToolTipRole:
        return toolTip(column);
    case Qt::TextAlignmentRole:
        return alignment(column);
    default:
        return {};
    }
}

QVariant TensorColumns::display(const TensorRow& row, const TensorRowResult* analysis, int column)
{
    switch (column) {
    case Name:
        return row.name;
    case Role:
        return roleText(row.role);
    case DType:
        return row.dtype;
    case Shape:
        return row.shapeText;
    case Params:
        return formatCount(row.params);
    case Bytes:
        return localizedBytes(row.bytes);
    case Share:
        return formatShare(row.share);
    case Decision:
        // An already-quantized checkpoint: the stored scheme is the fact, a plan on top of it means nothing.
        return row.storedScheme.isEmpty() ? analysisDisplay(analysis, column) : QVariant(row.storedScheme);
    default:
        return analysisDisplay(analysis, column);
    }
}

QVariant TensorColumns::sortKey(const TensorRow& row, const TensorRowResult* analysis, int column)
{
    switch (column) {
    case Name:
        return row.name;
    case Role:
        return roleText(row.role);
    case DType:
        return row.dtype;
    case Shape:
        // Shapes sort by size; comparing "[4096, 64]" with "[512]" as text would say nothing useful.
        return QVariant::fromValue<qulonglong>(row.params);
    case Params:
        return QVariant::fromValue<qulonglong>(row.params);
    case Bytes:
        return QVariant::fromValue<qulonglong>(row.bytes);
    case Share:
        return row.share;
    case Decision:
        return row.storedScheme.isEmpty() ? analysisSortKey(analysis, column) : QVariant(row.storedScheme);
    default:
        return analysisSortKey(analysis, column);
    }
}

QVariant TensorColumns::analysisDisplay(const TensorRowResult* analysis, int column)
{
    if (!analysis) {
        return {};
    }
    switch (column) {
    case Decision:
        return analysis->decision.isEmpty() ? QVariant() : QVariant(analysis->decision);
    case RelError:
        if (!analysis->unmeasuredScheme.isEmpty()) {
            return tr("not measured: %1").arg(analysis->unmeasuredScheme);
        }
        return analysis->relError ? QVariant(formatRelError(*analysis->relError)) : QVariant();
    case MaxError:
        return analysis->maxError ? QVariant(formatMaxError(*analysis->maxError)) : QVariant();
    default:
        return {};
    }
}

QVariant TensorColumns::analysisToolTip(const TensorRowResult* analysis, int column)
{
    if (!analysis || column != RelError) {
        return {};
    }
    if (!analysis->unmeasuredScheme.isEmpty()) {
        return tr("Planned as %1, which neither the last analysis nor the Budget tab's sweep has measured: "
                  "analyze with %1 (F5) or run the sweep.")
            .arg(analysis->unmeasuredScheme);
    }
    if (!analysis->sweptScheme.isEmpty() && analysis->relError) {
        return analysis->sweptUnit ? tr("%1, the planned scheme, measured by the Budget tab's sweep on the "
                                        "fused set (q/k/v or "
                                        "gate/up), all its members together.")
                                         .arg(analysis->sweptScheme)
                                   : tr("%1, the planned scheme, measured by the Budget tab's sweep.")
                                         .arg(analysis->sweptScheme);
    }
    return {};
}

QVariant TensorColumns::decisionCheckState(const TensorRow& row, const TensorRowResult* analysis)
{
    if (row.role != ModuleRole::Linear || !analysis || analysis->decision.isEmpty() ||
        !row.storedScheme.isEmpty()) {
        return {};
    }
    return analysis->decision == QStringLiteral("keep") ? Qt::Unchecked : Qt::Checked;
}

Qt::ItemFlags TensorColumns::decisionFlags(Qt::ItemFlags base, const QModelIndex& index,
                                           const TensorRowResult* analysis)
{
    if (index.isValid() && index.column() == Decision && index.data(Qt::CheckStateRole).isValid()) {
        base |= Qt::ItemIsUserCheckable | Qt::ItemIsEditable; // checkbox: keep/quantize; editor: the scheme
        if (analysis && !analysis->presetKeptBy.isEmpty()) {
            base &= ~Qt::ItemIsEnabled; // greyed as in the Plan tab: the preset keeps it
        }
    }
    return base;
}

bool TensorColumns::isDecisionToggle(const QModelIndex& index, const QVariant& value, int role)
{
    const QVariant current = index.data(Qt::CheckStateRole);
    return role == Qt::CheckStateRole && index.isValid() && index.column() == Decision && current.isValid() &&
           value != current;
}

bool TensorColumns::isDecisionEdit(const QModelIndex& index, const QVariant& value, int role)
{
    return role == Qt::EditRole && index.isValid() && index.column() == Decision &&
           index.data(Qt::CheckStateRole).isValid() && !value.toString().isEmpty() &&
           value.toString() != index.data(Qt::DisplayRole).toString();
}

QVariant TensorColumns::analysisSortKey(const TensorRowResult* analysis, int column)
{
    if (!analysis) {
        return {};
    }
    switch (column) {
    case Decision:
        return analysis->decision.isEmpty() ? QVariant() : QVariant(analysis->decision);
    case RelError:
        return analysis->relError ? QVariant(*analysis->relError) : QVariant();
    case MaxError:
        return analysis->maxError ? QVariant(*analysis->maxError) : QVariant();
    default:
        return {};
    }
}

} // namespace spark
