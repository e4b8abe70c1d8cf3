#include "views/lintmodel.h"

#include "core/plan/quantplan.h"

#include <QApplication>
#include <QHash>
#include <QStyle>

namespace spark {

LintModel::LintModel(QObject* parent) : QAbstractTableModel(parent) {}

void LintModel::resetData(std::shared_ptr<const QuantPlan> plan)
{
    // Findings come and go with every edit, so their rows are not stable: reset.
    beginResetModel();
    m_plan = std::move(plan);
    endResetModel();
}

QString LintModel::ruleDescription(const QString& id)
{
    static const QHash<QString, const char*> rules{
        {QStringLiteral("raw-weight-read"),
         QT_TR_NOOP("vLLM reads some weights (DFlash/DSpark qkv_proj) directly instead of through the quant "
                    "method, so stock vLLM cannot load them quantized.")},
        {QStringLiteral("kernel-shape"),
         QT_TR_NOOP("Marlin/Machete kernels need in % 128 == 0, out % 64 == 0 and in % group == 0 on each "
                    "tensor-parallel rank's part; other shapes stay BF16.")},
        {QStringLiteral("kernel-group-size"),
         QT_TR_NOOP("Not every vLLM kernel supports every group size; the finding names which ones do.")},
        {QStringLiteral("fused-group"),
         QT_TR_NOOP("The shards of a fused layer (q/k/v, gate/up) must share one decision, or vLLM raises "
                    "when it loads the checkpoint.")},
        {QStringLiteral("fused-entry-mismatch"),
         QT_TR_NOOP("An ignore entry selects a fused layer by one of its names but not the other; vLLM "
                    "versions disagree on which name they check.")},
        {QStringLiteral("invalid-entry"),
         QT_TR_NOOP("A `re:` entry does not compile as a regular expression.")},
        {QStringLiteral("target-unmatched"),
         QT_TR_NOOP("A target entry you added matches no vLLM module name (names are exact unless they "
                    "start with re:).")},
        {QStringLiteral("ignore-unmatched"),
         QT_TR_NOOP("An ignore entry you added matches no vLLM module name (names are exact unless they "
                    "start with re:).")},
        {QStringLiteral("entry-pattern"),
         QT_TR_NOOP("A regex that probably does not mean what it says: an unescaped '.', or no end anchor "
                    "although a longer name matches too.")},
        {QStringLiteral("target-layers-unknown"),
         QT_TR_NOOP("vLLM offsets draft layer indices by the target's layer count; without it the vLLM names "
                    "shown assume 0.")},
        {QStringLiteral("target-layers"), QT_TR_NOOP("The target layer count is not valid.")},
        {QStringLiteral("lm-head"),
         QT_TR_NOOP("The draft's head emits its logits and is never selected by the \"Linear\" target, so it "
                    "stays BF16.")},
        {QStringLiteral("embedding-gather"),
         QT_TR_NOOP("Embeddings are read a few rows per token; quantizing them buys no speed.")},
        {QStringLiteral("tiny-or-low-rank"),
         QT_TR_NOOP("Tiny or low-rank modules save few bytes and their rounding error is not averaged out.")},
        {QStringLiteral("target-pairing"),
         QT_TR_NOOP("A draft predicts from the target's hidden states: pair it with the target precision it "
                    "was calibrated for.")},
        {QStringLiteral("eagle3-fc"), QT_TR_NOOP("Older vLLM cannot load a quantized EAGLE-3 fc.")},
        {QStringLiteral("compile-cache"),
         QT_TR_NOOP("Older vLLM shared compiled graphs between a BF16 and a quantized draft of one "
                    "architecture.")},
        {QStringLiteral("nothing-quantized"), QT_TR_NOOP("The plan quantizes no module.")},
        {QStringLiteral("ignore-selfcheck"),
         QT_TR_NOOP("The generated ignore list does not select exactly the Linears kept BF16 (an internal "
                    "error).")},
        {QStringLiteral("scheme"), QT_TR_NOOP("vLLM cannot serve the chosen bits and group size.")},
        {QStringLiteral("unknown-preset"), QT_TR_NOOP("The preset name is not known.")},
    };
    const auto it = rules.constFind(id);
    return it == rules.constEnd() ? QString() : tr(it.value());
}

int LintModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_plan ? 0 : static_cast<int>(m_plan->lint.size());
}

int LintModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LintModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
    case Severity:
        return tr("Severity");
    case Id:
        return tr("Rule");
    case Message:
        return tr("Finding");
    default:
        return {};
    }
}

QVariant LintModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    const auto& f = m_plan->lint[static_cast<std::size_t>(index.row())];
    const QString id = QString::fromStdString(f.id);
    switch (role) {
    case ModulesRole: {
        QStringList modules;
        for (const auto& m : f.modules) {
            modules.append(QString::fromStdString(m));
        }
        return modules;
    }
    case SeverityRole:
        return static_cast<int>(f.severity);
    case Qt::ToolTipRole: {
        QString tip = ruleDescription(id);
        if (!f.citation.empty()) {
            tip += (tip.isEmpty() ? QString() : QStringLiteral("\n")) +
                   tr("Source: %1").arg(QString::fromStdString(f.citation));
        }
        if (!f.modules.empty()) {
            tip += QStringLiteral("\n") + tr("Click to select its modules in the Tensors tab.");
        }
        return tip;
    }
    default:
        break;
    }
    switch (index.column()) {
    case Severity:
        if (role == Qt::DisplayRole) {
            return QString::fromLatin1(severityName(f.severity).data(),
                                       static_cast<qsizetype>(severityName(f.severity).size()));
        }
        if (role == Qt::DecorationRole) {
            const auto icon = f.severity == LintSeverity::Error     ? QStyle::SP_MessageBoxCritical
                              : f.severity == LintSeverity::Warning ? QStyle::SP_MessageBoxWarning
                                                                    : QStyle::SP_MessageBoxInformation;
            return QApplication::style()->standardIcon(icon);
        }
        break;
    case Id:
        if (role == Qt::DisplayRole) {
            return id;
        }
        break;
    case Message:
        if (role == Qt::DisplayRole) {
            return QString::fromStdString(f.message);
        }
        break;
    default:
        break;
    }
    return {};
}

} // namespace spark
