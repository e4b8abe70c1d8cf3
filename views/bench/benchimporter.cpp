#include "views/bench/benchimporter.h"

#include "core/bench/bencherror.h"
#include "core/bench/benchimport.h"

#include <QFutureWatcher>
#include <QPromise>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>
#include <filesystem>

namespace spark {

namespace {

struct ImportOutcome
{
    BenchImport result;
    QString error;
};

} // namespace

BenchImporter::BenchImporter(QObject* parent) : QObject(parent) {}

// Watchers are children: deleting us disconnects them and a running import's result is discarded.
BenchImporter::~BenchImporter() = default;

void BenchImporter::import(const QStringList& paths, const RecordTags& tags)
{
    const quint64 job = m_jobs.startJob();
    m_pending = true;
    auto* watcher = new QFutureWatcher<ImportOutcome>(this);
    connect(watcher, &QFutureWatcher<ImportOutcome>::finished, this, [this, watcher, job, paths] {
        watcher->deleteLater();
        if (!m_jobs.isCurrent(job)) {
            return; // a newer import (or a cancel) superseded this one
        }
        m_pending = false;
        const ImportOutcome outcome = watcher->future().result();
        if (outcome.error.isEmpty()) {
            Q_EMIT imported(paths, outcome.result);
        } else {
            Q_EMIT failed(paths, outcome.error);
        }
    });
    watcher->setFuture(QtConcurrent::run([paths, tags](QPromise<ImportOutcome>& promise) {
        ImportOutcome outcome;
        std::vector<std::filesystem::path> files;
        for (const auto& path : paths) {
            files.emplace_back(path.toStdString());
        }
        try {
            outcome.result = importBenchFiles(files, tags);
        } catch (const BenchError& e) {
            // BenchError::what() reads "<file>:<line>: <problem>".
            outcome.error = QString::fromStdString(e.what());
        } catch (const std::exception& e) {
            outcome.error = QString::fromStdString(e.what());
        }
        promise.addResult(std::move(outcome));
    }));
}

void BenchImporter::cancel()
{
    m_jobs.invalidate();
    m_pending = false;
}

} // namespace spark
