#pragma once

#include "core/quant/weightscheme.h"
#include "views/analysis/analysisjob.h"
#include "views/tensors/tensorrowresult.h"

#include <QHash>
#include <QWidget>
#include <functional>
#include <memory>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;

namespace spark {

class Document;
struct QuantPlan;

/// @brief The analyze controls: scheme (any quantizing scheme), backend, a progress bar with the time left,
/// and Cancel. Runs AnalysisJob and streams each tensor's error into the Document as it completes; keeps the
/// full statistics for the detail panel's plots, per scheme: switching schemes shows the results kept for
/// the new one (none until F5 measures it). With a plan (setPlanSource()), F5 measures each module the plan
/// quantizes under its planned scheme and rounding, and the rest under the selected scheme.
class AnalysisPanel : public QWidget
{
    Q_OBJECT

  public:
    explicit AnalysisPanel(Document* document, QWidget* parent = nullptr);

    const WeightScheme& scheme() const;
    /// @brief Selects @p scheme in the scheme box (as a user would: kept results show, nothing runs).
    void setScheme(const WeightScheme& scheme);
    bool isRunning() const { return m_job->isRunning(); }
    /// @brief Where F5 reads the current plan from (may return null: every tensor under the selected scheme).
    void setPlanSource(std::function<std::shared_ptr<const QuantPlan>()> source)
    {
        m_plan = std::move(source);
    }
    /// @brief The result for @p tensor of the latest analysis, or nullptr.
    const TensorQuantResult* result(const QString& tensor) const;
    /// @brief Every result of the latest analysis (or the kept results of the selected scheme), by tensor.
    const QHash<QString, TensorQuantResult>& results() const { return m_results; }
    /// @brief True when analyze measures @p tensor of the open draft under the selected scheme (a 2-D weight
    /// whose columns divide by the group).
    bool isAnalyzable(const QString& tensor) const;
    int resultCount() const { return static_cast<int>(m_results.size()); }
    int failedCount() const { return m_failed; }
    /// @brief "about 12 s left" while running, empty otherwise.
    QString timeLeftText() const;

    QComboBox* schemeBox() const { return m_scheme; }
    QComboBox* backendBox() const { return m_backend; }

  public Q_SLOTS:
    /// @brief Analyzes the open document with the selected scheme (F5). No-op without a checkpoint.
    void analyze();
    /// @brief Stops a running analysis (Esc); results so far stay.
    void cancel();

  Q_SIGNALS:
    void schemeChanged(const QString& scheme);
    void started(int tensors);
    void tensorAnalyzed(const QString& tensor);
    void finished(bool cancelled);
    /// The Document's analysis was cleared (its decisions too): whoever owns them publishes them again.
    void analysisCleared();
    /// The results were replaced wholesale (another draft, another scheme): views of one result reread it.
    void resultsReset();
    void statusMessage(const QString& message, int timeoutMs);

  private:
    void onSchemeEdited();
    void onResult(const TensorQuantResult& result);
    /// The Document's row update for @p result; counts it in m_failed when it has no statistics.
    TensorAnalysisUpdate countedUpdate(const TensorQuantResult& result);
    void onProgress(double fraction, qint64 msLeft);
    void onFinished(bool cancelled);
    void onSnapshotChanged();
    void setRunning(bool running);

    Document* m_document;
    AnalysisJob* m_job;
    QComboBox* m_scheme;
    QComboBox* m_backend;
    QPushButton* m_analyze;
    QProgressBar* m_progress;
    QLabel* m_eta;
    QPushButton* m_cancel;
    std::function<std::shared_ptr<const QuantPlan>()> m_plan;
    QHash<QString, TensorQuantResult> m_results;
    QHash<QString, QHash<QString, TensorQuantResult>> m_kept; ///< finished runs by scheme name
    int m_expected = 0;
    int m_failed = 0;
    bool m_hasRun = false;
};

} // namespace spark
