#include "views/analysis/analysiscontroller.h"

#include "core/io/checkpoint.h"
#include "core/plan/quantplan.h"
#include "core/quant/analyzer.h"
#include "views/document/document.h"
#include "views/shared/formatting.h"

namespace spark {

AnalysisController::AnalysisController(Document* document, QObject* parent)
    : QObject(parent), m_document(document), m_job(new AnalysisJob(this))
{
    connect(m_job, &AnalysisJob::tensorAnalyzed, this, &AnalysisController::onResult);
    connect(m_job, &AnalysisJob::progressChanged, this, &AnalysisController::progressChanged);
    connect(m_job, &AnalysisJob::finished, this, &AnalysisController::onFinished);
    connect(m_document, &Document::snapshotChanged, this, &AnalysisController::onSnapshotChanged);
}

void AnalysisController::setScheme(const WeightScheme& scheme)
{
    if (&scheme == m_scheme) {
        return;
    }
    // A full analysis takes a while: switching schemes shows what was measured under the new one (kept from
    // an earlier run) or nothing, and F5 measures it. Errors of another scheme would mislead.
    m_job->cancel();
    m_scheme = &scheme;
    const auto name = schemeText(scheme);
    m_results = m_kept.value(name);
    m_failed = 0;
    m_document->clearAnalysis();
    Q_EMIT analysisCleared();
    std::vector<TensorAnalysisUpdate> updates;
    for (const auto& result : std::as_const(m_results)) {
        updates.push_back(countedUpdate(result));
    }
    m_document->setAnalysis(updates);
    Q_EMIT resultsReset();
    Q_EMIT schemeChanged(name);
    if (m_hasRun && m_results.isEmpty()) {
        Q_EMIT statusMessage(tr("%1 not analyzed yet: press F5 to measure it.").arg(name), 5000);
    }
}

const TensorQuantResult* AnalysisController::result(const QString& tensor) const
{
    const auto it = m_results.constFind(tensor);
    return it == m_results.constEnd() ? nullptr : &it.value();
}

bool AnalysisController::canAnalyze() const
{
    const auto snapshot = m_document->snapshot();
    return snapshot && snapshot->checkpoint;
}

bool AnalysisController::isAnalyzable(const QString& tensor) const
{
    const auto snapshot = m_document->snapshot();
    const CheckpointTensor* found =
        snapshot && snapshot->checkpoint ? snapshot->checkpoint->find(tensor.toStdString()) : nullptr;
    return found && spark::isAnalyzable(found->info, scheme());
}

void AnalysisController::analyze(std::shared_ptr<const QuantBackend> backend)
{
    const auto snapshot = m_document->snapshot();
    if (!snapshot || !snapshot->checkpoint) {
        Q_EMIT statusMessage(tr("Open a draft checkpoint to analyze it."), 5000);
        return;
    }
    m_job->cancel(); // its results are dropped from here on
    m_results.clear();
    m_failed = 0;
    m_hasRun = true;
    m_document->clearAnalysis();
    Q_EMIT analysisCleared();
    AnalyzeOptions options;
    options.scheme = m_scheme;
    if (const auto plan = m_plan ? m_plan() : nullptr; plan && !snapshot->isQuantized()) {
        for (const auto* m : plan->quantizedModules()) {
            options.tensorSchemes[m->weightTensor] = m->scheme;
            options.tensorRoundings[m->weightTensor] = m->rounding ? m->rounding : &rtnRounding();
        }
    }
    m_expected = m_job->start(snapshot->checkpoint, options, std::move(backend));
    Q_EMIT started(m_expected);
    const QString name = schemeText(*m_scheme);
    Q_EMIT statusMessage(options.tensorSchemes.empty()
                             ? tr("Analyzing %n tensor(s) with %1…", nullptr, m_expected).arg(name)
                             : tr("Analyzing %n tensor(s), each module under the scheme the plan gives it "
                                  "(kept ones under the default %1)…",
                                  nullptr, m_expected)
                                   .arg(name),
                         0);
}

void AnalysisController::cancel()
{
    m_job->cancel();
}

TensorAnalysisUpdate AnalysisController::countedUpdate(const TensorQuantResult& result)
{
    TensorAnalysisUpdate update;
    update.tensor = result.tensor;
    update.measuredScheme = result.scheme;
    update.measuredRounding = result.rounding;
    if (result.stats) {
        update.relError = result.stats->relErr;
        update.maxError = result.stats->maxAbsErr;
        update.sqNorm = result.stats->sqNorm;
        update.sqErr = result.stats->sqErr;
    } else {
        ++m_failed;
    }
    return update;
}

void AnalysisController::onResult(const TensorQuantResult& result)
{
    m_results.insert(result.tensor, result);
    m_document->setAnalysis({countedUpdate(result)});
    Q_EMIT tensorAnalyzed(result.tensor);
}

void AnalysisController::onFinished(bool cancelled)
{
    if (cancelled) {
        Q_EMIT statusMessage(
            tr("Analysis cancelled after %1 of %n tensor(s).", nullptr, m_expected).arg(m_results.size()),
            8000);
    } else {
        m_kept.insert(schemeText(m_job->scheme()), m_results);
        QString text = tr("Analysis finished: %n tensor(s)", nullptr, static_cast<int>(m_results.size()));
        if (m_failed > 0) {
            text += tr(", %n without statistics (NaN/Inf or read errors: see the detail panel)", nullptr,
                       m_failed);
        }
        Q_EMIT statusMessage(text + QLatin1Char('.'), 8000);
    }
    Q_EMIT finished(cancelled);
}

void AnalysisController::onSnapshotChanged()
{
    // Results of another checkpoint mean nothing here; the job id makes sure none arrive late.
    m_job->cancel();
    m_results.clear();
    m_kept.clear();
    m_failed = 0;
    m_hasRun = false;
    Q_EMIT draftChanged(canAnalyze());
    Q_EMIT resultsReset();
}

} // namespace spark
