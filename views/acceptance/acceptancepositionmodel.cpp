#include "views/acceptance/acceptancepositionmodel.h"

#include <QLocale>

namespace spark {
namespace {

QString fixed(double v, int digits = 4)
{
    return QLocale().toString(v, 'f', digits);
}

QString signedFixed(double v, int digits = 4)
{
    return (v >= 0 ? QStringLiteral("+") : QString()) + fixed(v, digits);
}

QString withInterval(double v, double low, double high, bool sign)
{
    const auto f = [sign](double x) { return sign ? signedFixed(x) : fixed(x); };
    return QStringLiteral("%1 [%2, %3]").arg(f(v), f(low), f(high));
}

} // namespace

AcceptancePositionModel::AcceptancePositionModel(QObject* parent) : QAbstractTableModel(parent) {}

void AcceptancePositionModel::resetData(const AcceptanceSummary& summary)
{
    beginResetModel();
    m_summary = summary;
    endResetModel();
}

void AcceptancePositionModel::clear()
{
    resetData({});
}

int AcceptancePositionModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_summary.positions.size());
}

int AcceptancePositionModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AcceptancePositionModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const auto& p = m_summary.positions[static_cast<std::size_t>(index.row())];
    const bool quantColumn = index.column() >= AcceptQuant;
    if (role == Qt::TextAlignmentRole) {
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role == ValueRole) {
        if (quantColumn && !m_summary.paired) {
            return {};
        }
        switch (index.column()) {
        case Position:
            return index.row();
        case AcceptBase:
            return p.acceptBase;
        case AcceptQuant:
            return p.acceptQuant;
        case Delta:
            return p.delta;
        case FlipRate:
            return p.flipRate;
        case Bound:
            return m_summary.sampled ? QVariant() : QVariant(p.lowerBound);
        case MeanKl:
            return p.meanKl;
        default:
            return {};
        }
    }
    if (role == Qt::ToolTipRole && index.column() == AcceptBase && m_summary.sampled) {
        return tr("Mean of ∏ α_j over the anchors; %1 % of them have their first %2 proposal(s) equal to the "
                  "captured tokens")
            .arg(QLocale().toString(100 * p.countedBase, 'f', 2))
            .arg(index.row() + 1);
    }
    if (role == Qt::ToolTipRole && index.column() == Bound && m_summary.sampled) {
        return tr("The bound holds for greedy counts only");
    }
    if (role == Qt::ToolTipRole && index.column() == FlipRate && m_summary.paired) {
        return tr("Among the %n anchor(s) where BF16's first %1 token(s) were accepted", nullptr,
                  static_cast<int>(p.baseAccepted))
            .arg(index.row() + 1);
    }
    if (role == Qt::ToolTipRole && index.column() == MeanKl && m_summary.paired) {
        return tr("Over %n anchor(s) where both drafts proposed the same earlier tokens", nullptr,
                  static_cast<int>(p.klAnchors));
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    if (quantColumn && !m_summary.paired) {
        return QStringLiteral("—");
    }
    switch (index.column()) {
    case Position:
        return QString::number(index.row());
    case AcceptBase:
        return withInterval(p.acceptBase, p.acceptBaseLow, p.acceptBaseHigh, false);
    case AcceptQuant:
        return withInterval(p.acceptQuant, p.acceptQuantLow, p.acceptQuantHigh, false);
    case Delta:
        return withInterval(p.delta, p.deltaLow, p.deltaHigh, true);
    case FlipRate:
        return QString(QLocale().toString(100 * p.flipRate, 'f', 2) + QStringLiteral(" %"));
    case Bound:
        return m_summary.sampled ? QStringLiteral("—") : fixed(p.lowerBound);
    case MeanKl:
        return QLocale().toString(p.meanKl, 'g', 4);
    default:
        return {};
    }
}

QVariant AcceptancePositionModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal) {
        return {};
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case AcceptBase:
            return tr("Share of anchors whose first i+1 BF16 proposals the target accepts (95% Wilson "
                      "interval); at a temperature, the mean probability ∏ α_j that it accepts them (95% "
                      "normal interval)");
        case AcceptQuant:
            return tr("The same for the quantized draft, on the same anchors");
        case Delta:
            return tr("a_i(quantized) − a_i(BF16), paired, with its 95% interval");
        case FlipRate:
            return tr("Among anchors BF16 accepted through position i, the share where the quantized draft "
                      "proposed something else");
        case Bound:
            return tr("a_i(BF16) · (1 − flip rate): the quantized draft accepts at least this");
        case MeanKl:
            return tr("Mean KL(BF16 ‖ quantized) of the position's distributions");
        default:
            return {};
        }
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
    case Position:
        return tr("i");
    case AcceptBase:
        return tr("a_i BF16 [95%]");
    case AcceptQuant:
        return tr("a_i quantized [95%]");
    case Delta:
        return tr("Δ [95%]");
    case FlipRate:
        return tr("Flips");
    case Bound:
        return tr("Bound");
    case MeanKl:
        return tr("Mean KL");
    default:
        return {};
    }
}

} // namespace spark
