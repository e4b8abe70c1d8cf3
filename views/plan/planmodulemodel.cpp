#include "views/plan/planmodulemodel.h"

#include "core/plan/quantplan.h"
#include "views/shared/formatting.h"

#include <QColor>

namespace spark {

PlanModuleModel::PlanModuleModel(QObject* parent) : QAbstractTableModel(parent) {}

void PlanModuleModel::resetData(std::shared_ptr<const QuantPlan> plan)
{
    auto sameModules = [&] {
        if (!m_plan || !plan || m_plan->modules.size() != plan->modules.size()) {
            return false;
        }
        for (std::size_t i = 0; i < plan->modules.size(); ++i) {
            if (m_plan->modules[i].name != plan->modules[i].name) {
                return false;
            }
        }
        return true;
    };
    if (sameModules()) {
        // Same rows: keep selection and scroll position while the user edits entries.
        m_plan = std::move(plan);
        if (rowCount() > 0) {
            Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
        }
        return;
    }
    beginResetModel();
    m_plan = std::move(plan);
    endResetModel();
}

int PlanModuleModel::rowOf(const QString& name) const
{
    if (!m_plan) {
        return -1;
    }
    const std::string key = name.toStdString();
    for (std::size_t i = 0; i < m_plan->modules.size(); ++i) {
        if (m_plan->modules[i].name == key) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

int PlanModuleModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_plan ? 0 : static_cast<int>(m_plan->modules.size());
}

int PlanModuleModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PlanModuleModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal) {
        return {};
    }
    if (role == Qt::DisplayRole) {
        switch (section) {
        case Module:
            return tr("Module");
        case VllmName:
            return tr("vLLM name");
        case Role:
            return tr("Role");
        case Decision:
            return tr("Decision");
        case Reason:
            return tr("Reason");
        case Bytes:
            return tr("Bytes");
        case BytesAfter:
            return tr("After");
        default:
            return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case VllmName:
            return tr(
                "The prefix vLLM matches quantization entries against: \"model.\", the layer index offset "
                "by the target's layer count, and the fused name (qkv_proj, gate_up_proj).");
        case Decision:
            return tr("Tick to quantize a Linear, untick to keep it BF16. The plan edits your entries to do "
                      "it; fused partners (q/k/v, gate/up) always change together.");
        default:
            return {};
        }
    }
    return {};
}

Qt::ItemFlags PlanModuleModel::flags(const QModelIndex& index) const
{
    if (!index.isValid()) {
        return Qt::NoItemFlags;
    }
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == Decision && m_plan->modules[static_cast<std::size_t>(index.row())].isLinear()) {
        f |= Qt::ItemIsUserCheckable;
    }
    return f;
}

QVariant PlanModuleModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    const auto& m = m_plan->modules[static_cast<std::size_t>(index.row())];
    const bool quantized = m.decision == PlanDecision::Quantize;
    if (role == ModuleNameRole) {
        return QString::fromStdString(m.name);
    }
    if (role == Qt::BackgroundRole) {
        // Translucent tints read on light and dark palettes alike.
        return quantized ? QColor(46, 160, 67, 56) : (m.isLinear() ? QColor(128, 128, 128, 36) : QVariant());
    }
    switch (index.column()) {
    case Module:
        if (role == Qt::DisplayRole || role == SortRole) {
            return QString::fromStdString(m.name);
        }
        break;
    case VllmName:
        if (role == Qt::DisplayRole || role == SortRole || role == Qt::ToolTipRole) {
            return QString::fromStdString(m.vllmName);
        }
        break;
    case Role:
        if (role == Qt::DisplayRole || role == SortRole) {
            return QString::fromStdString(std::string(roleName(m.role)));
        }
        break;
    case Decision:
        if (role == Qt::DisplayRole || role == SortRole) {
            return quantized ? schemeText(*m.scheme) : tr("keep");
        }
        if (role == Qt::CheckStateRole && m.isLinear()) {
            return quantized ? Qt::Checked : Qt::Unchecked;
        }
        break;
    case Reason:
        if (role == Qt::DisplayRole || role == Qt::ToolTipRole || role == SortRole) {
            return QString::fromStdString(m.reason);
        }
        break;
    case Bytes:
        if (role == Qt::DisplayRole) {
            return localizedBytes(m.bytes);
        }
        if (role == SortRole) {
            return QVariant::fromValue<qulonglong>(m.bytes);
        }
        if (role == Qt::TextAlignmentRole) {
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        }
        break;
    case BytesAfter:
        if (role == Qt::DisplayRole) {
            return localizedBytes(m.bytesAfter);
        }
        if (role == SortRole) {
            return QVariant::fromValue<qulonglong>(m.bytesAfter);
        }
        if (role == Qt::TextAlignmentRole) {
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        }
        break;
    default:
        break;
    }
    return {};
}

bool PlanModuleModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (role != Qt::CheckStateRole || !(flags(index) & Qt::ItemIsUserCheckable)) {
        return false;
    }
    const auto& m = m_plan->modules[static_cast<std::size_t>(index.row())];
    const bool wantQuantize = value.toInt() == Qt::Checked;
    if (wantQuantize == (m.decision == PlanDecision::Quantize)) {
        return false;
    }
    // The new state arrives with the next plan; the checkbox shows the plan's decision, not the click.
    Q_EMIT toggleRequested(QString::fromStdString(m.name));
    return true;
}

} // namespace spark
