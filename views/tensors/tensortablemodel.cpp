#include "views/tensors/tensortablemodel.h"

#include "views/shared/schemecolors.h"
#include "views/tensors/tensorcolumns.h"

#include <algorithm>

namespace spark {

TensorTableModel::TensorTableModel(QObject* parent) : TensorItemModel(parent) {}

QModelIndex TensorTableModel::index(int row, int column, const QModelIndex& parent) const
{
    return hasIndex(row, column, parent) ? createIndex(row, column) : QModelIndex();
}

QModelIndex TensorTableModel::parent(const QModelIndex& /*child*/) const
{
    return {}; // a flat list
}

void TensorTableModel::resetData(std::shared_ptr<const DocumentSnapshot> snapshot,
                                 std::shared_ptr<const AnalysisTable> analysis)
{
    beginResetModel();
    m_snapshot = std::move(snapshot);
    m_analysis = std::move(analysis);
    endResetModel();
}

void TensorTableModel::updateAnalysis(std::shared_ptr<const AnalysisTable> analysis, const QList<int>& rows)
{
    m_analysis = std::move(analysis);
    if (rows.isEmpty()) {
        return;
    }
    // One dataChanged per contiguous run keeps a full analysis pass to a handful of signals.
    auto sorted = rows;
    std::sort(sorted.begin(), sorted.end());
    const int count = rowCount();
    int first = -1;
    int last = -1;
    auto flush = [&] {
        if (first >= 0) {
            Q_EMIT dataChanged(index(first, TensorColumns::FirstAnalysisColumn),
                               index(last, TensorColumns::LastAnalysisColumn));
        }
    };
    for (const int row : sorted) {
        if (row < 0 || row >= count || row == last) {
            continue;
        }
        if (row != last + 1 || first < 0) {
            flush();
            first = row;
        }
        last = row;
    }
    flush();
}

QModelIndex TensorTableModel::indexOfTensor(const QString& name) const
{
    const int row = m_snapshot ? m_snapshot->rowOf(name) : -1;
    return row < 0 ? QModelIndex() : index(row, 0);
}

int TensorTableModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !m_snapshot) {
        return 0;
    }
    return static_cast<int>(m_snapshot->rows.size());
}

int TensorTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : TensorColumns::Count;
}

const TensorRowResult* TensorTableModel::analysisOf(int row) const
{
    if (!m_analysis || row < 0 || static_cast<std::size_t>(row) >= m_analysis->size()) {
        return nullptr;
    }
    return &(*m_analysis)[static_cast<std::size_t>(row)];
}

QVariant TensorTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const auto& row = m_snapshot->rows[static_cast<std::size_t>(index.row())];
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        return TensorColumns::display(row, analysisOf(index.row()), column);
    case Qt::ToolTipRole:
        return column == TensorColumns::Name
                   ? QVariant(row.name)
                   : TensorColumns::analysisToolTip(analysisOf(index.row()), column);
    case Qt::TextAlignmentRole:
        return TensorColumns::alignment(column);
    case TensorColumns::SortRole:
        return TensorColumns::sortKey(row, analysisOf(index.row()), column);
    case TensorColumns::TensorNameRole:
    case TensorColumns::NodeNameRole:
        return row.name;
    case TensorColumns::NodeKindRole:
        return static_cast<int>(TensorColumns::TensorNode);
    case TensorColumns::RowRole:
        return index.row();
    case Qt::CheckStateRole:
        return column == TensorColumns::Decision
                   ? TensorColumns::decisionCheckState(row, analysisOf(index.row()))
                   : QVariant();
    case Qt::BackgroundRole: {
        const auto* analysis = analysisOf(index.row());
        if (column == TensorColumns::Decision && !row.storedScheme.isEmpty()) {
            return schemeBackground(row.storedScheme);
        }
        return column == TensorColumns::Decision && analysis ? schemeBackground(analysis->decision)
                                                             : QVariant();
    }
    default:
        return {};
    }
}

Qt::ItemFlags TensorTableModel::flags(const QModelIndex& index) const
{
    Qt::ItemFlags flags = TensorItemModel::flags(index);
    if (index.isValid()) {
        flags |= Qt::ItemNeverHasChildren; // a flat list: views need not ask
    }
    return TensorColumns::decisionFlags(flags, index, index.isValid() ? analysisOf(index.row()) : nullptr);
}

bool TensorTableModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    const QString module =
        index.isValid() ? m_snapshot->rows[static_cast<std::size_t>(index.row())].module : QString();
    if (TensorColumns::isDecisionToggle(index, value, role)) {
        Q_EMIT decisionToggleRequested(module);
    } else if (TensorColumns::isDecisionEdit(index, value, role)) {
        Q_EMIT schemeChangeRequested(module, value.toString());
    }
    return false;
}

QVariant TensorTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= TensorColumns::Count) {
        return TensorItemModel::headerData(section, orientation, role);
    }
    return TensorColumns::header(section, role);
}

} // namespace spark
