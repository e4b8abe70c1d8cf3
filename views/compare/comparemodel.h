#pragma once

#include "core/audit/comparer.h"

#include <QAbstractTableModel>
#include <memory>

namespace spark {

/// @brief The modules of a CompareReport as a table (thin view over the shared, immutable report).
class CompareModel : public QAbstractTableModel
{
    Q_OBJECT

  public:
    enum Column {
        Module,
        SourceScheme,
        OutputScheme,
        SourceBytes,
        OutputBytes,
        BitsPerWeight,
        RelErr,
        BitExact,
        CopiedTensors, ///< "2 differ" where tensors that should be copies of the source are not
        ColumnCount
    };
    /// Sort value of a cell (numbers as double, text as QString).
    static constexpr int SortRole = Qt::UserRole;

    explicit CompareModel(QObject* parent = nullptr);

    void resetData(std::shared_ptr<const CompareReport> report);
    const CompareReport* report() const { return m_report.get(); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  private:
    std::shared_ptr<const CompareReport> m_report;
};

} // namespace spark
