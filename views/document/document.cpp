#include "views/document/document.h"

namespace spark {

Document::Document(QObject* parent) : QObject(parent), m_analysis(std::make_shared<const AnalysisTable>()) {}

void Document::setSnapshot(std::shared_ptr<const DocumentSnapshot> snapshot)
{
    m_snapshot = std::move(snapshot);
    m_analysis = std::make_shared<const AnalysisTable>(m_snapshot ? m_snapshot->rows.size() : 0);
    Q_EMIT snapshotChanged();
}

int Document::setAnalysis(const std::vector<TensorAnalysisUpdate>& updates)
{
    if (!m_snapshot || updates.empty()) {
        return 0;
    }
    // Copy-on-write: models still hold the old table until they receive the new one with the signal.
    auto table = std::make_shared<AnalysisTable>(*m_analysis);
    QList<int> changed;
    for (const auto& update : updates) {
        const int row = m_snapshot->rowOf(update.tensor);
        if (row < 0) {
            continue;
        }
        auto& entry = (*table)[static_cast<std::size_t>(row)];
        if (update.decision) {
            entry.decision = *update.decision;
        }
        if (update.rounding) {
            entry.rounding = *update.rounding;
        }
        if (update.presetKeptBy) {
            entry.presetKeptBy = *update.presetKeptBy;
        }
        if (update.relError) {
            entry.relError = update.relError;
        }
        if (update.measuredScheme) {
            entry.measuredScheme = update.measuredScheme;
            entry.measuredRounding = update.measuredRounding;
        }
        if (update.maxError) {
            entry.maxError = update.maxError;
        }
        if (update.sqNorm) {
            entry.sqNorm = update.sqNorm;
        }
        if (update.sqErr) {
            entry.sqErr = update.sqErr;
        }
        changed.append(row);
    }
    if (changed.isEmpty()) {
        return 0;
    }
    m_analysis = std::move(table);
    Q_EMIT analysisChanged(changed);
    return static_cast<int>(changed.size());
}

void Document::clearAnalysis()
{
    const std::size_t size = m_analysis->size();
    m_analysis = std::make_shared<const AnalysisTable>(size);
    QList<int> rows;
    rows.reserve(static_cast<qsizetype>(size));
    for (std::size_t i = 0; i < size; ++i) {
        rows.append(static_cast<int>(i));
    }
    Q_EMIT analysisChanged(rows);
}

} // namespace spark
