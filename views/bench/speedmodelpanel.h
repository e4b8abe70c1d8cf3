#pragma once

#include "core/bench/benchreport.h"
#include "core/bench/speedmodelresult.h"

#include <QString>
#include <QWidget>
#include <memory>
#include <optional>

class QComboBox;
class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QTableWidget;

namespace spark {

/// @brief The speed-model panel of the Benchmarks tab: the drafter time per verify cycle, the
/// drafter kind and an optional drafter-time saving of a quantized draft; a table per cell (τ(k), T, t_D
/// share, D(j), k*, and D′, k′*, measured and residual for a quantized draft) and a plot of predicted
/// tok/s against k per arm with the measured points. Every number comes from core's computeSpeedModel();
/// inconsistent inputs show core's error, which names the cell.
class SpeedModelPanel : public QWidget
{
    Q_OBJECT

  public:
    /// Columns of table().
    enum Column {
        ArmColumn,
        PromptColumn,
        KColumn,
        TauColumn,
        CycleColumn,
        DrafterShareColumn,
        RatesColumn,
        BestKColumn,
        QuantizedRateColumn,
        QuantizedChangeColumn,
        QuantizedBestKColumn,
        MeasuredColumn,
        ResidualColumn,
        ColumnCount
    };

    explicit SpeedModelPanel(QWidget* parent = nullptr);

    /// @brief Models @p report (null: nothing to model).
    void setReport(std::shared_ptr<const BenchReport> report);
    /// @brief The kind of the open draft's architecture, used while the kind selector says "from the
    /// draft" (nullopt: unknown, chain is assumed).
    void setArchitectureKind(std::optional<DrafterKind> kind, const QString& architecture);

    /// @brief The model on screen; null without a drafter time, without data, or after an error.
    std::shared_ptr<const SpeedModel> model() const { return m_model; }
    /// @brief Core's error for inconsistent inputs (it names the cell), empty when none.
    QString errorText() const;
    /// @brief k* as the table shows it for (@p arm, @p promptLen); -1 when the table has no such row.
    int shownBestK(const QString& arm, long long promptLen) const;

    QDoubleSpinBox* drafterMsInput() const { return m_drafterMs; }
    QComboBox* kindInput() const { return m_kind; }
    QDoubleSpinBox* savingMsInput() const { return m_savingMs; }
    QComboBox* promptLenInput() const { return m_promptLen; }
    QTableWidget* table() const { return m_table; }
    QCustomPlot* plot() const { return m_plot; }

  Q_SIGNALS:
    /// The model (or its absence) changed.
    void modelChanged();

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void recompute();
    void fillTable();
    void updatePromptLens();
    void redraw();

    std::shared_ptr<const BenchReport> m_report;
    std::shared_ptr<const SpeedModel> m_model;
    std::optional<DrafterKind> m_architectureKind;
    QString m_architecture;
    QDoubleSpinBox* m_drafterMs;
    QComboBox* m_kind;
    QDoubleSpinBox* m_savingMs;
    QComboBox* m_promptLen;
    QLabel* m_error;
    QLabel* m_assumptions;
    QTableWidget* m_table;
    QCustomPlot* m_plot;
};

} // namespace spark
