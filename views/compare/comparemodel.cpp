#include "views/compare/comparemodel.h"

#include "core/util/textformat.h"
#include "views/shared/formatting.h"

#include <QBrush>
#include <QColor>
#include <QStringList>

namespace spark {

CompareModel::CompareModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareModel::resetData(std::shared_ptr<const CompareReport> report)
{
    beginResetModel();
    m_report = std::move(report);
    endResetModel();
}

int CompareModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_report ? 0 : static_cast<int>(m_report->modules.size());
}

int CompareModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CompareModel::data(const QModelIndex& index, int role) const
{
    if (!m_report || !index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    const auto& m = m_report->modules[static_cast<std::size_t>(index.row())];
    const bool sort = role == SortRole;
    if (role == Qt::ForegroundRole &&
        ((index.column() == BitExact && (m.bitExact == BitExactness::No || !m.inSource)) ||
         (index.column() == CopiedTensors && !m.differingCopies.empty()))) {
        return QBrush(QColor(0xc0, 0x30, 0x30));
    }
    if (role == Qt::ToolTipRole) {
        QStringList lines;
        if (!m.detail.empty()) {
            lines << QString::fromStdString(m.detail);
        }
        if (!m.differingCopies.empty()) {
            QStringList names;
            for (const auto& t : m.differingCopies) {
                names << QString::fromStdString(t);
            }
            lines << tr("Should be byte-identical copies of the source, but differ: %1")
                         .arg(names.join(QStringLiteral(", ")));
        }
        return lines.isEmpty() ? QVariant() : QVariant(lines.join(QLatin1Char('\n')));
    }
    if (role == Qt::TextAlignmentRole) {
        return index.column() >= SourceBytes && index.column() <= RelErr
                   ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter))
                   : QVariant();
    }
    if (role != Qt::DisplayRole && !sort) {
        return {};
    }
    switch (index.column()) {
    case Module:
        return QString::fromStdString(m.module);
    case SourceScheme:
        return m.inSource ? QString::fromStdString(m.sourceScheme) : tr("missing");
    case OutputScheme:
        return QString::fromStdString(m.outputScheme);
    case SourceBytes:
        if (!m.inSource) {
            return sort ? QVariant(-1.0) : QVariant(QStringLiteral("-"));
        }
        return sort ? QVariant(static_cast<double>(m.sourceBytes))
                    : QVariant(QString::fromStdString(formatBytes(m.sourceBytes)));
    case OutputBytes:
        return sort ? QVariant(static_cast<double>(m.outputBytes))
                    : QVariant(QString::fromStdString(formatBytes(m.outputBytes)));
    case BitsPerWeight:
        return sort ? QVariant(m.outputBitsPerWeight)
                    : QVariant(QString::number(m.outputBitsPerWeight, 'f', 3));
    case RelErr:
        if (!m.relErr) {
            return sort ? QVariant(-1.0) : QVariant(m.nonFinite ? tr("inf") : QStringLiteral("-"));
        }
        return sort ? QVariant(*m.relErr) : QVariant(formatRelError(*m.relErr));
    case BitExact:
        if (!m.inSource) {
            return tr("missing in source");
        }
        return m.quantizedInOutput ? QString::fromLatin1(bitExactnessName(m.bitExact).data()) : tr("copy");
    case CopiedTensors:
        if (sort) {
            return static_cast<double>(m.differingCopies.size());
        }
        return m.differingCopies.empty()       ? QString()
               : m.differingCopies.size() == 1 ? tr("1 differs")
                                               : tr("%1 differ").arg(m.differingCopies.size());
    default:
        return {};
    }
}

QVariant CompareModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    switch (section) {
    case Module:
        return tr("Module");
    case SourceScheme:
        return tr("Source");
    case OutputScheme:
        return tr("Output");
    case SourceBytes:
        return tr("Source bytes");
    case OutputBytes:
        return tr("Output bytes");
    case BitsPerWeight:
        return tr("Bits/weight");
    case RelErr:
        return tr("Rel. error");
    case BitExact:
        return tr("Bit-exact");
    case CopiedTensors:
        return tr("Copied tensors");
    default:
        return {};
    }
}

} // namespace spark
