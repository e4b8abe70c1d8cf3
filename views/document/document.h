#pragma once

#include "views/document/documentsnapshot.h"
#include "views/tensors/tensorrowresult.h"

#include <QList>
#include <QObject>
#include <memory>
#include <vector>

namespace spark {

/// @brief The open checkpoint and the results computed for it. Holds immutable snapshots and swaps
/// them whole, so models and background jobs can keep a shared_ptr to the state they started from.
/// Later stages (analyze, plan) report through setAnalysis(); views listen to the two signals.
class Document : public QObject
{
    Q_OBJECT

  public:
    explicit Document(QObject* parent = nullptr);

    /// @brief The open checkpoint, or null when nothing is open.
    std::shared_ptr<const DocumentSnapshot> snapshot() const { return m_snapshot; }
    /// @brief The analysis table (never null; indexed like snapshot()->rows).
    std::shared_ptr<const AnalysisTable> analysis() const { return m_analysis; }
    bool isEmpty() const { return !m_snapshot; }

    /// @brief Replaces the open checkpoint (null: close it) and clears the analysis.
    void setSnapshot(std::shared_ptr<const DocumentSnapshot> snapshot);

    /// @brief Merges per-tensor results (fields left empty keep their value). Names not in the snapshot are
    /// ignored, so results of a job started on another snapshot cannot land on the wrong rows.
    /// @return the number of rows changed.
    int setAnalysis(const std::vector<TensorAnalysisUpdate>& updates);
    /// @brief Forgets every decision and error (e.g. before re-running analyze with another scheme).
    void clearAnalysis();

  Q_SIGNALS:
    /// A new snapshot (or none) is in place; models reset.
    void snapshotChanged();
    /// The analysis of @p rows changed; models emit dataChanged for the analysis columns of these rows.
    void analysisChanged(const QList<int>& rows);

  private:
    std::shared_ptr<const DocumentSnapshot> m_snapshot;
    std::shared_ptr<const AnalysisTable> m_analysis;
};

} // namespace spark
