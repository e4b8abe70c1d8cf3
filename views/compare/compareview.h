#pragma once

#include "core/audit/comparer.h"
#include "views/shared/backgroundjob.h"

#include <QWidget>
#include <memory>

class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace spark {

class CompareModel;
class ComparePlot;

/// @brief Two checkpoints side by side (the Compare tab): a BF16 source and a quantized output of it, per
/// module the schemes, bytes, rel. error and bit-exactness (core compareCheckpoints(), a BackgroundJob with
/// its progress in the status line), and a per-module error plot. A newer comparison cancels an older one.
class CompareView : public QWidget
{
    Q_OBJECT

  public:
    explicit CompareView(QWidget* parent = nullptr);

    void setPaths(const QString& source, const QString& output);
    /// @brief The draft just opened: @p path goes in the output field when @p quantized, else in the source
    /// field, unless either holds it already; the last result goes (it was of other checkpoints).
    void suggestPath(const QString& path, bool quantized);
    /// @brief No result: the table, the plot and the summary of the last comparison go.
    void clearResult();
    QString sourcePath() const;
    QString outputPath() const;
    /// @brief Starts comparing the two paths (validated first: both must exist).
    void startCompare();
    bool isRunning() const;

    const CompareReport* report() const;
    CompareModel* model() const { return m_model; }
    ComparePlot* plot() const { return m_plot; }
    QString statusText() const;

  Q_SIGNALS:
    /// A comparison ended: with a report, or with an error shown in the status line.
    void finished();

  private:
    /// What a comparison hands back: the report, or the error that stopped it (file and tensor); neither
    /// when a newer comparison cancelled it.
    struct Outcome
    {
        std::shared_ptr<const CompareReport> report;
        QString error;
    };
    void onFinished(const Outcome& outcome);

    QLineEdit* m_source;
    QLineEdit* m_output;
    QPushButton* m_run;
    QLabel* m_status;
    CompareModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QTableView* m_table;
    ComparePlot* m_plot;
    BackgroundJob<Outcome> m_job;
};

} // namespace spark
