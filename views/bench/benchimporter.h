#pragma once

#include "core/bench/benchrecord.h"
#include "views/shared/jobtracker.h"

#include <QObject>
#include <QStringList>

namespace spark {

/// @brief Imports benchmark files in the background (QtConcurrent + QPromise). A large JSON Lines file
/// or server log must not freeze the window, and an import started later wins over one still running:
/// each import gets a job id and only the latest reports.
class BenchImporter : public QObject
{
    Q_OBJECT

  public:
    explicit BenchImporter(QObject* parent = nullptr);
    ~BenchImporter() override;

    /// @brief Starts importing @p paths in the order given (two /metrics scrapes pair up as before, after).
    void import(const QStringList& paths, const RecordTags& tags = {});
    /// @brief Drops the running import, if any.
    void cancel();
    bool isImporting() const { return m_pending; }

  Q_SIGNALS:
    void imported(const QStringList& paths, const spark::BenchImport& result);
    /// @p message names the file and, where one applies, the line.
    void failed(const QStringList& paths, const QString& message);

  private:
    JobTracker m_jobs;
    bool m_pending = false;
};

} // namespace spark
