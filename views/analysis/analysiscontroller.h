#pragma once

#include "core/quant/weightscheme.h"
#include "views/analysis/analysisjob.h"
#include "views/tensors/tensorrowresult.h"

#include <QHash>
#include <QObject>
#include <functional>
#include <memory>

namespace spark {

class Document;
struct QuantPlan;

/// @brief The analysis of the open draft, beside PlanController: which scheme it measures, the running
/// AnalysisJob, and its results. Each tensor's error streams into the Document as it completes; the full
/// statistics stay here for the detail panel's plots, per scheme: switching schemes shows the results kept
/// for the new one (none until analyze() measures it). With a plan (setPlanSource()), analyze() measures
/// each module the plan quantizes under its planned scheme and rounding, and the rest under scheme().
/// No widgets: AnalysisPanel is its controls.
class AnalysisController : public QObject
{
    Q_OBJECT

  public:
    explicit AnalysisController(Document* document, QObject* parent = nullptr);

    const WeightScheme& scheme() const { return *m_scheme; }
    /// @brief Measures under @p scheme from now on: its kept results show, nothing runs.
    void setScheme(const WeightScheme& scheme);
    /// @brief Where analyze() reads the current plan from (may return null: every tensor under scheme()).
    void setPlanSource(std::function<std::shared_ptr<const QuantPlan>()> source)
    {
        m_plan = std::move(source);
    }

    bool isRunning() const { return m_job->isRunning(); }
    /// @brief The result for @p tensor of the latest analysis, or nullptr.
    const TensorQuantResult* result(const QString& tensor) const;
    /// @brief Every result of the latest analysis (or the kept results of the scheme), by tensor.
    const QHash<QString, TensorQuantResult>& results() const { return m_results; }
    /// @brief True when analyze measures @p tensor of the open draft under scheme() (a 2-D weight whose
    /// columns divide by the group).
    bool isAnalyzable(const QString& tensor) const;
    int resultCount() const { return static_cast<int>(m_results.size()); }
    int failedCount() const { return m_failed; }
    /// @brief A checkpoint is open to analyze.
    bool canAnalyze() const;

  public Q_SLOTS:
    /// @brief Analyzes the open document on @p backend (null: the CPU). No-op without a checkpoint.
    void analyze(std::shared_ptr<const QuantBackend> backend = nullptr);
    /// @brief Stops a running analysis; results so far stay.
    void cancel();

  Q_SIGNALS:
    void schemeChanged(const QString& scheme);
    void started(int tensors);
    void tensorAnalyzed(const QString& tensor);
    /// @p fraction of the bytes done (0..1); @p msLeft estimated from the rate so far, -1 while unknown.
    void progressChanged(double fraction, qint64 msLeft);
    void finished(bool cancelled);
    /// The Document's analysis was cleared (its decisions too): whoever owns them publishes them again.
    void analysisCleared();
    /// The results were replaced wholesale (another draft, another scheme): views of one result reread it.
    void resultsReset();
    /// Another draft (or none) is open: @p analyzable says whether analyze() has a checkpoint to measure.
    void draftChanged(bool analyzable);
    void statusMessage(const QString& message, int timeoutMs);

  private:
    void onResult(const TensorQuantResult& result);
    /// The Document's row update for @p result; counts it in m_failed when it has no statistics.
    TensorAnalysisUpdate countedUpdate(const TensorQuantResult& result);
    void onFinished(bool cancelled);
    void onSnapshotChanged();

    Document* m_document;
    AnalysisJob* m_job;
    const WeightScheme* m_scheme = intSymmetricScheme(4, 128);
    std::function<std::shared_ptr<const QuantPlan>()> m_plan;
    QHash<QString, TensorQuantResult> m_results;
    QHash<QString, QHash<QString, TensorQuantResult>> m_kept; ///< finished runs by scheme name
    int m_expected = 0;
    int m_failed = 0;
    bool m_hasRun = false;
};

} // namespace spark
