#include "views/bench/benchtablemodel.h"

#include <QLocale>
#include <cmath>
#include <limits>

namespace spark {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Locale-aware like the rest of the GUI; the Markdown copy uses core's locale-independent format.
QString fixed(double value, int digits)
{
    if (std::isnan(value)) {
        return QStringLiteral("n/a");
    }
    if (std::isinf(value)) {
        return value > 0 ? QStringLiteral("∞") : QStringLiteral("−∞");
    }
    return QLocale().toString(value, 'f', digits);
}

QString signedFixed(double value, int digits)
{
    const QString text = fixed(value, digits);
    return std::isfinite(value) && value > 0 ? QStringLiteral("+") + text : text;
}

} // namespace

BenchTableModel::BenchTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void BenchTableModel::resetData(std::shared_ptr<const BenchReport> report)
{
    beginResetModel();
    m_report = std::move(report);
    endResetModel();
}

int BenchTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_report ? 0 : static_cast<int>(m_report->cells.size());
}

int BenchTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

double BenchTableModel::number(const BenchCell& cell, const BenchComparison* comparison, int column)
{
    const auto* decode = cell.metric(benchmetric::kDecodeTokS);
    const auto* rate = cell.metric(benchmetric::kAcceptanceRate);
    const auto* length = cell.metric(benchmetric::kAcceptanceLength);
    const WelchResult* welch = comparison ? &comparison->welch : nullptr;
    switch (column) {
    case PromptLen:
        return static_cast<double>(cell.promptLen);
    case Count:
        return static_cast<double>(decode ? decode->n : cell.records);
    case Mean:
        return decode ? decode->mean : kNaN;
    case Sd:
        return decode ? decode->sd : kNaN;
    case Median:
        return decode ? decode->median : kNaN;
    case Cv:
        return decode ? 100.0 * decode->cv : kNaN;
    case DeltaPercent:
        return welch ? welch->deltaPercent : kNaN;
    case Ci:
        return welch && welch->valid ? welch->deltaPercentCiLow : kNaN;
    case P:
        return welch && welch->valid ? welch->p : kNaN;
    case Sigma:
        return welch && welch->valid ? welch->sigma : kNaN;
    case AcceptanceRate:
        return rate ? 100.0 * rate->mean : kNaN;
    case AcceptanceLength:
        return length ? length->mean : kNaN;
    default:
        return kNaN;
    }
}

QVariant BenchTableModel::display(const BenchCell& cell, const BenchComparison* comparison, int column) const
{
    const bool baseline = m_report->isBaseline(cell.arm);
    const double value = number(cell, comparison, column);
    switch (column) {
    case Arm: {
        const QString arm = cell.arm.empty() ? tr("(no arm)") : QString::fromStdString(cell.arm);
        return baseline ? tr("%1 (baseline)").arg(arm) : arm;
    }
    case PromptLen:
        return cell.promptLen > 0 ? QLocale().toString(cell.promptLen) : tr("unknown");
    case Count:
        return QLocale().toString(static_cast<qlonglong>(value));
    case Mean:
    case Median:
        return fixed(value, 2);
    case Sd:
        return fixed(value, 3);
    case Cv:
        return std::isnan(value) ? fixed(value, 2) : tr("%1 %").arg(fixed(value, 2));
    case DeltaPercent:
        if (baseline) {
            return QStringLiteral("—");
        }
        return std::isnan(value) ? fixed(value, 2) : tr("%1 %").arg(signedFixed(value, 2));
    case Ci:
        if (baseline) {
            return QStringLiteral("—");
        }
        if (!comparison || !comparison->welch.valid) {
            return fixed(kNaN, 2);
        }
        return tr("[%1, %2] %")
            .arg(signedFixed(comparison->welch.deltaPercentCiLow, 2),
                 signedFixed(comparison->welch.deltaPercentCiHigh, 2));
    case P:
        if (baseline) {
            return QStringLiteral("—");
        }
        return std::isnan(value) ? fixed(value, 2) : QLocale().toString(value, 'g', 3);
    case Sigma:
        if (baseline) {
            return QStringLiteral("—");
        }
        if (std::isnan(value)) {
            return fixed(value, 2);
        }
        return comparison->welch.significant() ? fixed(value, 2) : tr("%1 n.s.").arg(fixed(value, 2));
    case AcceptanceRate:
        return std::isnan(value) ? QStringLiteral("—") : tr("%1 %").arg(fixed(value, 2));
    case AcceptanceLength:
        return std::isnan(value) ? QStringLiteral("—") : fixed(value, 3);
    default:
        return {};
    }
}

QVariant BenchTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) || !m_report) {
        return {};
    }
    const auto& cell = m_report->cells[static_cast<std::size_t>(index.row())];
    const bool baseline = m_report->isBaseline(cell.arm);
    const auto* comparison =
        baseline ? nullptr : m_report->comparison(benchmetric::kDecodeTokS, cell.promptLen, cell.arm);
    switch (role) {
    case Qt::DisplayRole:
        return display(cell, comparison, index.column());
    case SortRole:
        if (index.column() == Arm) {
            return QString::fromStdString(cell.arm);
        }
        return number(cell, comparison, index.column());
    case BaselineRole:
        return baseline;
    case Qt::TextAlignmentRole:
        return index.column() == Arm ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                     : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole:
        if (index.column() == Arm && !cell.sources.empty()) {
            QStringList sources;
            for (const auto& source : cell.sources) {
                sources.append(QString::fromStdString(source));
            }
            const auto* setup = m_report->setupOf(cell.arm);
            return tr("Setup: %1, compared with %2\nImported from:\n%3")
                .arg(QString::fromStdString(setup->label()), QString::fromStdString(setup->baselineArm),
                     sources.join(QLatin1Char('\n')));
        }
        if (comparison && !comparison->welch.valid &&
            (index.column() >= DeltaPercent && index.column() <= Sigma)) {
            return tr("Needs at least two repeats in both arms for a confidence interval.");
        }
        return {};
    default:
        return {};
    }
}

QVariant BenchTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    if (role == Qt::DisplayRole) {
        switch (section) {
        case Arm:
            return tr("Arm");
        case PromptLen:
            return tr("Prompt");
        case Count:
            return tr("n");
        case Mean:
            return tr("Decode tok/s");
        case Sd:
            return tr("SD");
        case Median:
            return tr("Median");
        case Cv:
            return tr("CV");
        case DeltaPercent:
            return tr("Δ %");
        case Ci:
            return tr("%1 % CI of Δ")
                .arg(QLocale().toString(100.0 * (m_report ? m_report->confidence : 0.95)));
        case P:
            return tr("p");
        case Sigma:
            return tr("σ");
        case AcceptanceRate:
            return tr("Acceptance");
        case AcceptanceLength:
            return tr("Mean AL");
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case PromptLen:
            return tr("Input tokens per request.");
        case Count:
            return tr("Repeats with a decode speed.");
        case Mean:
            return tr("Mean decode speed over the repeats (1000 / mean TPOT).");
        case Sd:
            return tr("Sample standard deviation (n − 1) of the decode speed.");
        case Cv:
            return tr("Coefficient of variation: SD / mean. Above a few percent the runs are noisy.");
        case DeltaPercent:
            return tr("Decode speed of this arm minus the baseline's, in percent of the baseline.");
        case Ci:
            return tr("Welch confidence interval of the difference, in percent of the baseline mean.");
        case P:
            return tr("Two-sided p-value of Welch's t test against the baseline.");
        case Sigma:
            return tr("Gaussian-equivalent significance −Φ⁻¹(p/2); n.s. when the CI contains zero.");
        case AcceptanceRate:
            return tr("Accepted draft tokens / proposed draft tokens.");
        case AcceptanceLength:
            return tr("Mean tokens per verification step, the bonus token included.");
        default:
            return {};
        }
    }
    return QAbstractTableModel::headerData(section, orientation, role);
}

} // namespace spark
