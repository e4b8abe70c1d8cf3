#pragma once

#include "core/bench/benchimport.h"
#include "core/bench/benchrecord.h"
#include "views/shared/backgroundjob.h"

#include <QObject>
#include <QStringList>

namespace spark {

/// @brief Imports benchmark files in the background (a BackgroundJob). A large JSON Lines file or server log
/// must not freeze the window, and an import started later wins over one still running: only the latest
/// reports.
class BenchImporter : public QObject
{
    Q_OBJECT

  public:
    explicit BenchImporter(QObject* parent = nullptr);

    /// @brief Starts importing @p paths in the order given (two /metrics scrapes pair up as before, after).
    void import(const QStringList& paths, const RecordTags& tags = {});
    /// @brief Drops the running import, if any.
    void cancel();
    bool isImporting() const { return m_job.isRunning(); }

  Q_SIGNALS:
    void imported(const QStringList& paths, const spark::BenchImport& result);
    /// @p message names the file and, where one applies, the line.
    void failed(const QStringList& paths, const QString& message);

  private:
    /// What an import ends with: the records, or why there are none; neither when it was dropped.
    struct Outcome
    {
        BenchImport result;
        bool done = false;
        QString error;
    };

    void onFinished(const Outcome& outcome);

    BackgroundJob<Outcome> m_job;
    QStringList m_paths; ///< of the import running (the only one that reports)
};

} // namespace spark
