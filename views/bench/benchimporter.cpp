#include "views/bench/benchimporter.h"

#include <filesystem>

namespace spark {

BenchImporter::BenchImporter(QObject* parent)
    : QObject(parent), m_job(
                           this, [](double) {}, [this](const Outcome& outcome) { onFinished(outcome); })
{
}

void BenchImporter::import(const QStringList& paths, const RecordTags& tags)
{
    m_paths = paths;
    m_job.start([paths, tags](const ProgressFn&) {
        std::vector<std::filesystem::path> files;
        for (const auto& path : paths) {
            files.emplace_back(path.toStdString());
        }
        // A BenchError's message reads "<file>:<line>: <problem>"; it becomes the outcome's error.
        return Outcome{importBenchFiles(files, tags), true, {}};
    });
}

void BenchImporter::cancel()
{
    m_job.cancel();
}

void BenchImporter::onFinished(const Outcome& outcome)
{
    if (!outcome.error.isEmpty()) {
        Q_EMIT failed(m_paths, outcome.error);
    } else if (outcome.done) {
        Q_EMIT imported(m_paths, outcome.result);
    }
}

} // namespace spark
