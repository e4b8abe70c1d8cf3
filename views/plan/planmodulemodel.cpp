#include "views/plan/planmodulemodel.h"

#include "core/plan/presetkept.h"
#include "core/plan/quantplan.h"
#include "core/plan/sensitivitysweep.h"
#include "views/shared/formatting.h"
#include "views/tensors/plannederrors.h"

#include <QColor>
#include <QHash>
#include <algorithm>
#include <cmath>

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
        findPresetKept();
        recomputeErrors();
        if (rowCount() > 0) {
            Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
        }
        return;
    }
    beginResetModel();
    m_plan = std::move(plan);
    findPresetKept();
    recomputeErrors();
    endResetModel();
}

void PlanModuleModel::findPresetKept()
{
    m_presetKept = m_plan ? presetKeptModules(*m_plan) : std::map<std::string, std::string>{};
}

void PlanModuleModel::setAnalysis(std::shared_ptr<const DocumentSnapshot> snapshot,
                                  std::shared_ptr<const AnalysisTable> analysis)
{
    m_snapshot = std::move(snapshot);
    m_analysis = std::move(analysis);
    const auto before = m_errors;
    recomputeErrors();
    announceErrorChanges(before);
}

void PlanModuleModel::setAnalysisScheme(const WeightScheme* scheme)
{
    if (scheme == m_analysisScheme) {
        return;
    }
    m_analysisScheme = scheme;
    const auto before = m_errors;
    recomputeErrors();
    announceErrorChanges(before);
}

void PlanModuleModel::setSweep(std::shared_ptr<const SweepResult> sweep)
{
    m_sweep = std::move(sweep);
    const auto before = m_errors;
    recomputeErrors();
    announceErrorChanges(before);
}

void PlanModuleModel::announceErrorChanges(const std::vector<ModuleError>& before)
{
    // Decisions arrive through the Document too: announce the column only when an error changed.
    for (int row = 0; row < rowCount(); ++row) {
        const auto& a = before.size() > static_cast<std::size_t>(row) ? before[static_cast<std::size_t>(row)]
                                                                      : ModuleError{};
        if (!(a == m_errors[static_cast<std::size_t>(row)])) {
            Q_EMIT dataChanged(index(0, RelError), index(rowCount() - 1, RelError));
            break;
        }
    }
}

std::optional<double> PlanModuleModel::sweepError(const std::string& module, const WeightScheme* scheme,
                                                  const RoundingMethod* rounding) const
{
    if (!m_sweep || !m_sweep->measured) {
        return std::nullopt;
    }
    for (const auto& unit : m_sweep->units) {
        if (std::find(unit.modules.begin(), unit.modules.end(), module) == unit.modules.end()) {
            continue;
        }
        const auto* candidate = unit.candidate(scheme, rounding ? rounding : &rtnRounding());
        return candidate ? std::optional<double>(candidate->relErr) : std::nullopt;
    }
    return std::nullopt;
}

const WeightScheme* PlanModuleModel::errorScheme(int row) const
{
    return row >= 0 && static_cast<std::size_t>(row) < m_errors.size()
               ? m_errors[static_cast<std::size_t>(row)].scheme
               : nullptr;
}

const WeightScheme* PlanModuleModel::unmeasuredScheme(int row) const
{
    return row >= 0 && static_cast<std::size_t>(row) < m_errors.size()
               ? m_errors[static_cast<std::size_t>(row)].unmeasured
               : nullptr;
}

const TensorRowResult* PlanModuleModel::resultOf(const std::string& tensor) const
{
    if (!m_snapshot || !m_analysis || tensor.empty()) {
        return nullptr;
    }
    const int row = m_snapshot->rowOf(QString::fromStdString(tensor));
    if (row < 0 || static_cast<std::size_t>(row) >= m_analysis->size()) {
        return nullptr;
    }
    return &(*m_analysis)[static_cast<std::size_t>(row)];
}

void PlanModuleModel::recomputeErrors()
{
    m_errors.assign(static_cast<std::size_t>(rowCount()), ModuleError{});
    if (!m_plan) {
        return;
    }
    // The members of each fused set (they share the fused vLLM name), to add up their sums.
    QHash<QString, std::vector<std::size_t>> sets;
    for (std::size_t i = 0; i < m_plan->modules.size(); ++i) {
        const auto& m = m_plan->modules[i];
        if (!m.fusedGroup.empty()) {
            sets[QString::fromStdString(m.vllmName)].push_back(i);
        }
    }
    for (std::size_t i = 0; i < m_plan->modules.size(); ++i) {
        const auto& m = m_plan->modules[i];
        const bool quantized = m.decision == PlanDecision::Quantize && m.scheme && m.scheme->quantizes();
        // A quantized module's analysis counts only when it was measured under its planned scheme and
        // rounding (F5 with a plan measures so); a kept one shows what quantizing would cost.
        auto counts = [&](const TensorRowResult* r) {
            if (!r || !r->relError) {
                return false;
            }
            // An analysis of unknown scheme is shown as it is.
            return !quantized || (!r->measuredScheme && !m_analysisScheme) ||
                   measuredAs(*r, m_analysisScheme, m.scheme, m.rounding);
        };
        // The analysis' error: the module's own, or its fused set's when every member has its sums.
        const auto* own = resultOf(m.weightTensor);
        ModuleError analysed;
        analysed.relError = counts(own) ? own->relError : std::nullopt;
        if (!m.fusedGroup.empty()) {
            double sqNorm = 0.0;
            double sqErr = 0.0;
            bool complete = true;
            for (const std::size_t member : sets.value(QString::fromStdString(m.vllmName))) {
                const auto* r = resultOf(m_plan->modules[member].weightTensor);
                if (!counts(r) || !r->sqNorm || !r->sqErr) {
                    complete = false;
                    break;
                }
                sqNorm += *r->sqNorm;
                sqErr += *r->sqErr;
            }
            if (complete && sqNorm > 0.0) {
                analysed.relError = std::sqrt(sqErr / sqNorm);
                analysed.combined = true;
            }
        }
        if (analysed.relError) {
            analysed.source = ErrorSource::Analysis;
            analysed.scheme = own && own->measuredScheme ? own->measuredScheme : m_analysisScheme;
        }
        auto& error = m_errors[i];
        if (!quantized || !m_analysisScheme || analysed.relError) {
            error = analysed;
            continue;
        }
        // A quantized module shows its own scheme's error: the sweep measured every legal scheme.
        if (const auto swept = sweepError(m.name, m.scheme, m.rounding)) {
            error.relError = swept;
            error.combined = !m.fusedGroup.empty();
            error.source = ErrorSource::Sweep;
            error.scheme = m.scheme;
            continue;
        }
        error.unmeasured = m.scheme;
    }
}

std::optional<double> PlanModuleModel::relError(int row) const
{
    return row >= 0 && static_cast<std::size_t>(row) < m_errors.size()
               ? m_errors[static_cast<std::size_t>(row)].relError
               : std::nullopt;
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
        case RelError:
            return tr("Rel. error");
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
        case RelError:
            return tr(
                "Rel. error ‖W − Q(W)‖ / ‖W‖ of the module's weight under the scheme it is planned for: "
                "from the last analysis (F5) when it used that scheme, else from the Budget tab's "
                "sweep; \"not measured\" names a planned scheme neither has measured. A kept module "
                "shows the analysis scheme's error. A fused set (q/k/v, gate/up) shows the error of "
                "the whole set: sqrt(Σ‖W − Q(W)‖² / Σ‖W‖²) over its members.");
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
    const auto& m = m_plan->modules[static_cast<std::size_t>(index.row())];
    if (index.column() == Decision && m.isLinear()) {
        f |= Qt::ItemIsUserCheckable;
        if (m_presetKept.contains(m.name)) {
            f &= ~Qt::ItemIsEnabled;
        }
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
        if (role == Qt::DisplayRole || role == SortRole || role == Qt::ToolTipRole) {
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
            if (!quantized) {
                return tr("keep");
            }
            // RTN is today's rounding and the default: only another method earns room in the narrow column.
            return schemeAndRoundingText(*m.scheme, m.rounding);
        }
        if (role == Qt::ToolTipRole && m_presetKept.contains(m.name)) {
            return tr("Kept BF16 by the preset's ignore entry '%1': choose another preset to quantize it.")
                .arg(QString::fromStdString(m_presetKept.at(m.name)));
        }
        if (role == Qt::ToolTipRole && quantized && m.rounding) {
            return tr("%1, %2 rounding: %3")
                .arg(schemeText(*m.scheme), roundingText(*m.rounding), roundingSummary(*m.rounding));
        }
        if (role == Qt::CheckStateRole && m.isLinear()) {
            return quantized ? Qt::Checked : Qt::Unchecked;
        }
        break;
    case RelError: {
        const auto& error = m_errors[static_cast<std::size_t>(index.row())];
        if (role == Qt::DisplayRole) {
            if (error.unmeasured) {
                return tr("not measured: %1").arg(schemeText(*error.unmeasured));
            }
            return error.relError ? QVariant(formatRelError(*error.relError)) : QVariant();
        }
        if (role == SortRole) {
            return error.relError ? QVariant(*error.relError) : QVariant();
        }
        if (role == Qt::TextAlignmentRole) {
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        }
        if (role == Qt::ToolTipRole) {
            if (error.unmeasured) {
                return tr("Planned as %1, which neither the last analysis nor a sweep measured: press F5 "
                          "(it measures every planned module under its plan) or run the Budget tab's sweep.")
                    .arg(schemeText(*error.unmeasured));
            }
            if (!error.relError) {
                return {};
            }
            QString what = !error.scheme ? tr("From the last analysis.")
                           : error.source == ErrorSource::Sweep
                               ? tr("%1, measured by the sweep.").arg(schemeText(*error.scheme))
                           : quantized ? tr("%1, from the last analysis.").arg(schemeText(*error.scheme))
                                       : tr("Kept BF16; %1 would give this error (last analysis).")
                                             .arg(schemeText(*error.scheme));
            if (error.combined) {
                what += QLatin1Char(' ') + tr("The error of the fused set %1, all its members together.")
                                               .arg(QString::fromStdString(m.vllmName));
            }
            return what;
        }
        break;
    }
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
