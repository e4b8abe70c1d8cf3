#pragma once

#include <QRegularExpression>
#include <QSortFilterProxyModel>

namespace spark {

/// @brief Filters tensors by name (plain text or a regular expression) and sorts every column by its
/// TensorColumns::SortRole key: numbers as numbers, names in natural order ("layers.2" before
/// "layers.10"), rows without a value (not analyzed yet) last in either order. Works over the flat and the
/// grouped model; in the tree a group or module is shown when any tensor below it matches.
class TensorFilterProxyModel : public QSortFilterProxyModel
{
    Q_OBJECT

  public:
    explicit TensorFilterProxyModel(QObject* parent = nullptr);

    /// @brief Sets the filter. Plain text matches a substring of the tensor name, ignoring case; a regex
    /// is searched anywhere in the name (a filter box, unlike the plan's `re:` entries which are
    /// anchored). An invalid regex keeps the previous filter in force and is reported by filterError().
    /// @return true when the filter was valid and applied.
    bool setFilter(const QString& text, bool isRegex);

    QString filterText() const { return m_text; }
    bool isRegexFilter() const { return m_isRegex; }
    /// @brief Why the last regex did not compile (with the offset), or empty.
    QString filterError() const { return m_error; }

    /// @brief Natural order: digit runs compare as numbers ("layers.2" < "layers.10"), the rest ignoring
    /// case. Done by hand because QCollator ignores numeric mode in the C locale.
    static int naturalCompare(const QString& a, const QString& b);

    /// @brief Number of tensors (leaf rows) the filter lets through.
    int acceptedTensorCount() const;

  protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

  private:
    bool nameMatches(const QString& name) const;

    QString m_text;
    bool m_isRegex = false;
    QString m_error;
    // The filter in force: differs from m_text/m_isRegex while the typed regex is invalid.
    QString m_appliedText;
    bool m_appliedIsRegex = false;
    QRegularExpression m_regex;
};

} // namespace spark
