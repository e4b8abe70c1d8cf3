#include "views/tensors/tensorfilterproxymodel.h"

#include "views/tensors/tensorcolumns.h"

namespace spark {

TensorFilterProxyModel::TensorFilterProxyModel(QObject* parent) : QSortFilterProxyModel(parent)
{
    setSortRole(TensorColumns::SortRole);
    setRecursiveFilteringEnabled(true);
}

bool TensorFilterProxyModel::setFilter(const QString& text, bool isRegex)
{
    m_text = text;
    m_isRegex = isRegex;
    if (isRegex && !text.isEmpty()) {
        QRegularExpression regex(text);
        if (!regex.isValid()) {
            m_error = tr("%1 at position %2").arg(regex.errorString()).arg(regex.patternErrorOffset());
            return false;
        }
        regex.optimize();
        m_regex = regex;
    }
    m_error.clear();
    m_appliedText = text;
    m_appliedIsRegex = isRegex;
    invalidateFilter();
    return true;
}

bool TensorFilterProxyModel::nameMatches(const QString& name) const
{
    if (m_appliedIsRegex) {
        return m_regex.match(name).hasMatch();
    }
    return name.contains(m_appliedText, Qt::CaseInsensitive);
}

bool TensorFilterProxyModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const
{
    if (m_appliedText.isEmpty()) {
        return true;
    }
    const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
    // Only tensors are matched; recursive filtering then shows the groups and modules above a match.
    if (index.data(TensorColumns::NodeKindRole).toInt() != TensorColumns::TensorNode) {
        return false;
    }
    return nameMatches(index.data(TensorColumns::TensorNameRole).toString());
}

bool TensorFilterProxyModel::lessThan(const QModelIndex& left, const QModelIndex& right) const
{
    const QVariant a = left.data(sortRole());
    const QVariant b = right.data(sortRole());
    // Missing values (no analysis yet) sort after present ones in both orders. A descending sort asks
    // lessThan(right, left), so there "missing" must compare as the smaller value to end up last.
    if (!a.isValid() || !b.isValid()) {
        return sortOrder() == Qt::AscendingOrder ? a.isValid() && !b.isValid() : !a.isValid() && b.isValid();
    }
    const auto typeA = a.metaType().id();
    const auto typeB = b.metaType().id();
    if (typeA == QMetaType::QString || typeB == QMetaType::QString) {
        return naturalCompare(a.toString(), b.toString()) < 0;
    }
    if (typeA == QMetaType::ULongLong && typeB == QMetaType::ULongLong) {
        return a.toULongLong() < b.toULongLong();
    }
    return a.toDouble() < b.toDouble();
}

int TensorFilterProxyModel::naturalCompare(const QString& a, const QString& b)
{
    qsizetype i = 0;
    qsizetype j = 0;
    while (i < a.size() && j < b.size()) {
        if (a.at(i).isDigit() && b.at(j).isDigit()) {
            // Compare digit runs by value: skip leading zeros, then the longer run is larger.
            const qsizetype startA = i;
            const qsizetype startB = j;
            while (i < a.size() && a.at(i).isDigit()) {
                ++i;
            }
            while (j < b.size() && b.at(j).isDigit()) {
                ++j;
            }
            QStringView runA = QStringView(a).mid(startA, i - startA);
            QStringView runB = QStringView(b).mid(startB, j - startB);
            while (runA.size() > 1 && runA.front() == QLatin1Char('0')) {
                runA = runA.mid(1);
            }
            while (runB.size() > 1 && runB.front() == QLatin1Char('0')) {
                runB = runB.mid(1);
            }
            if (runA.size() != runB.size()) {
                return runA.size() < runB.size() ? -1 : 1;
            }
            if (const int c = runA.compare(runB); c != 0) {
                return c < 0 ? -1 : 1;
            }
            continue;
        }
        const QChar ca = a.at(i).toCaseFolded();
        const QChar cb = b.at(j).toCaseFolded();
        if (ca != cb) {
            return ca < cb ? -1 : 1;
        }
        ++i;
        ++j;
    }
    if (i < a.size() || j < b.size()) {
        return i < a.size() ? 1 : -1;
    }
    // Equal ignoring case and zeros: fall back to plain order so the sort stays total.
    return QString::compare(a, b);
}

int TensorFilterProxyModel::acceptedTensorCount() const
{
    int count = 0;
    // Walks the proxy (not the source) so the count is what the view shows.
    std::vector<QModelIndex> pending{QModelIndex()};
    while (!pending.empty()) {
        const QModelIndex parent = pending.back();
        pending.pop_back();
        const int rows = rowCount(parent);
        for (int row = 0; row < rows; ++row) {
            const QModelIndex child = index(row, 0, parent);
            if (child.data(TensorColumns::NodeKindRole).toInt() == TensorColumns::TensorNode) {
                ++count;
            } else {
                pending.push_back(child);
            }
        }
    }
    return count;
}

} // namespace spark
