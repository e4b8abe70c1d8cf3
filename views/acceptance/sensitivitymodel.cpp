#include "views/acceptance/sensitivitymodel.h"

#include "core/plan/sensitivityalpha.h"

#include <QLocale>

namespace spark {
namespace {

QString signedFixed(double v)
{
    return (v >= 0 ? QStringLiteral("+") : QString()) + QLocale().toString(v, 'f', 4);
}

std::vector<UnitAcceptanceLoss> lossesOf(const std::vector<UnitSensitivity>& units)
{
    std::vector<UnitAcceptanceLoss> out;
    for (const auto& u : units) {
        out.push_back({u.unit, u.tauDelta});
    }
    return out;
}

} // namespace

SensitivityModel::SensitivityModel(QObject* parent) : QAbstractTableModel(parent) {}

void SensitivityModel::resetData(const std::vector<UnitSensitivity>& units)
{
    beginResetModel();
    m_units = units;
    std::vector<double> deltas;
    for (const auto& u : m_units) {
        deltas.push_back(u.tauDelta);
    }
    m_alphas = alphasFromTauDeltas(deltas);
    endResetModel();
}

QStringList SensitivityModel::alphaRules() const
{
    QStringList rules;
    for (const auto& rule : alphaRulesFromSensitivity(lossesOf(m_units))) {
        rules.append(QString::fromStdString(rule));
    }
    return rules;
}

int SensitivityModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_units.size());
}

int SensitivityModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SensitivityModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const auto row = static_cast<std::size_t>(index.row());
    const auto& u = m_units[row];
    if (role == ValueRole) {
        switch (index.column()) {
        case Unit:
            return QString::fromStdString(u.unit);
        case Scheme:
            return QString::fromStdString(u.scheme);
        case TauDelta:
            return u.tauDelta;
        case FirstDelta:
            return u.deltaFirst;
        case FirstFlips:
            return u.flipFirst;
        case Alpha:
            return m_alphas[row];
        default:
            return {};
        }
    }
    if (role == Qt::ToolTipRole && index.column() == Unit) {
        QStringList modules;
        for (const auto& m : u.modules) {
            modules.append(QString::fromStdString(m));
        }
        return modules.join(QStringLiteral("\n"));
    }
    if (role == Qt::TextAlignmentRole && index.column() >= TauDelta) {
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (index.column()) {
    case Unit:
        return QString::fromStdString(u.unit);
    case Scheme:
        return QString::fromStdString(u.scheme);
    case TauDelta:
        return QStringLiteral("%1 [%2, %3]")
            .arg(signedFixed(u.tauDelta), signedFixed(u.tauDeltaLow), signedFixed(u.tauDeltaHigh));
    case FirstDelta:
        return signedFixed(u.deltaFirst);
    case FirstFlips:
        return QString(QLocale().toString(100 * u.flipFirst, 'f', 2) + QStringLiteral(" %"));
    case Alpha:
        return QLocale().toString(m_alphas[row], 'f', 3);
    default:
        return {};
    }
}

QVariant SensitivityModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal) {
        return {};
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case TauDelta:
            return tr("τ change when this unit alone is quantized (the rest BF16), paired, 95% interval");
        case FirstDelta:
            return tr("a_0 change when this unit alone is quantized");
        case FirstFlips:
            return tr("Flip rate at position 0");
        case Alpha:
            return tr("The budget allocator's weight: max(0.05, loss / mean loss over units that lose)");
        default:
            return {};
        }
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
    case Unit:
        return tr("Unit (quantized alone)");
    case Scheme:
        return tr("Scheme");
    case TauDelta:
        return tr("τ change [95%]");
    case FirstDelta:
        return tr("a_0 change");
    case FirstFlips:
        return tr("Flips at 0");
    case Alpha:
        return tr("α");
    default:
        return {};
    }
}

} // namespace spark
