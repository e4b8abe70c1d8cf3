#pragma once

#include "views/document/documentsnapshot.h"
#include "views/shared/backgroundjob.h"

#include <QObject>
#include <memory>

namespace spark {

/// @brief Opens checkpoints in the background (a BackgroundJob). Opening reads headers only and is quick,
/// but a slow disk or network share must not freeze the window, and a second open must win over a first
/// one still running: only the latest load reports.
class CheckpointLoader : public QObject
{
    Q_OBJECT

  public:
    explicit CheckpointLoader(QObject* parent = nullptr);

    /// @brief Starts opening @p path; any load still running becomes stale and will not report.
    void load(const QString& path);
    /// @brief Drops the running load, if any.
    void cancel();
    bool isLoading() const { return m_job.isRunning(); }

    /// @brief Opens @p path in the calling thread. Returns the snapshot, or null with @p error set to a
    /// one-line message that names the file and the problem.
    static std::shared_ptr<const DocumentSnapshot> openNow(const QString& path, QString* error);

  Q_SIGNALS:
    void loaded(const QString& path, std::shared_ptr<const spark::DocumentSnapshot> snapshot);
    void failed(const QString& path, const QString& message);

  private:
    /// The snapshot or why there is none (file and problem); neither when a newer load dropped it.
    struct Outcome
    {
        std::shared_ptr<const DocumentSnapshot> snapshot;
        QString error;
    };
    void onFinished(const Outcome& outcome);

    BackgroundJob<Outcome> m_job;
    QString m_path; ///< of the load running (the only one that reports)
};

} // namespace spark
