#pragma once

#include "core/forward/acceptancejob.h"

#include <QAbstractTableModel>
#include <QStringList>
#include <vector>

namespace spark {

/// @brief The per-unit sensitivity ranking: one row per decision unit quantized alone (the rest BF16), in
/// core's order (largest τ loss first), with the α the Budget tab would get from it
/// (alphasFromTauDeltas()). A thin view over the ranking it copies; ValueRole gives each cell's number.
class SensitivityModel : public QAbstractTableModel
{
    Q_OBJECT

  public:
    enum Column { Unit, Scheme, TauDelta, FirstDelta, FirstFlips, Alpha, ColumnCount };
    enum Role { ValueRole = Qt::UserRole + 1 };

    explicit SensitivityModel(QObject* parent = nullptr);

    void resetData(const std::vector<UnitSensitivity>& units);
    const std::vector<UnitSensitivity>& units() const { return m_units; }
    const std::vector<double>& alphas() const { return m_alphas; }
    /// @brief The ranking as budget-allocator α rules (alphaRulesFromSensitivity()).
    QStringList alphaRules() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  private:
    std::vector<UnitSensitivity> m_units;
    std::vector<double> m_alphas;
};

} // namespace spark
