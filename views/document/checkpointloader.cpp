#include "views/document/checkpointloader.h"

#include "core/io/checkpoint.h"
#include "core/io/ioerror.h"

#include <QFileInfo>
#include <QFutureWatcher>
#include <QPromise>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>

namespace spark {

namespace {

struct LoadResult
{
    std::shared_ptr<const DocumentSnapshot> snapshot;
    QString error;
};

// The reader's header and layout errors (format-spec §1.3): the file is not a safetensors file.
bool isHeaderError(IoErrorKind kind)
{
    switch (kind) {
    case IoErrorKind::HeaderTooSmall:
    case IoErrorKind::HeaderTooLarge:
    case IoErrorKind::InvalidHeaderLength:
    case IoErrorKind::InvalidHeader:
    case IoErrorKind::InvalidHeaderDeserialization:
    case IoErrorKind::InvalidOffset:
    case IoErrorKind::ValidationOverflow:
    case IoErrorKind::MisalignedSlice:
    case IoErrorKind::TensorInvalidInfo:
    case IoErrorKind::MetadataIncompleteBuffer:
    case IoErrorKind::DuplicateKey:
        return true;
    default:
        return false;
    }
}

} // namespace

CheckpointLoader::CheckpointLoader(QObject* parent) : QObject(parent) {}

// Running loads hold nothing of ours: their watchers are children and are deleted with us, which
// disconnects them; the worker thread finishes on its own and its result is discarded.
CheckpointLoader::~CheckpointLoader() = default;

std::shared_ptr<const DocumentSnapshot> CheckpointLoader::openNow(const QString& path, QString* error)
{
    const QString display = QFileInfo(path).absoluteFilePath();
    try {
        auto checkpoint = std::make_shared<const Checkpoint>(Checkpoint::open(path.toStdString()));
        return DocumentSnapshot::fromCheckpoint(std::move(checkpoint), display);
    } catch (const IoError& e) {
        // IoError::what() already reads "<file>: <problem> [tensor '<name>']". A file that is no safetensors
        // at all (a bad header) says so first, in words, before the parser's detail.
        const QString detail = QString::fromStdString(e.what());
        *error = isHeaderError(e.kind()) ? tr("Not a safetensors file: %1").arg(detail) : detail;
    } catch (const std::exception& e) {
        *error = tr("%1: %2").arg(display, QString::fromStdString(e.what()));
    }
    return nullptr;
}

void CheckpointLoader::load(const QString& path)
{
    const quint64 job = m_jobs.startJob();
    m_pendingPath = path;
    ++m_running;
    auto* watcher = new QFutureWatcher<LoadResult>(this);
    connect(watcher, &QFutureWatcher<LoadResult>::finished, this, [this, watcher, job, path] {
        watcher->deleteLater();
        --m_running;
        if (!m_jobs.isCurrent(job)) {
            return; // a newer load (or a cancel) superseded this one
        }
        m_pendingPath.clear();
        const LoadResult result = watcher->future().result();
        if (result.snapshot) {
            Q_EMIT loaded(path, result.snapshot);
        } else {
            Q_EMIT failed(path, result.error);
        }
    });
    watcher->setFuture(QtConcurrent::run([path](QPromise<LoadResult>& promise) {
        LoadResult result;
        result.snapshot = openNow(path, &result.error);
        promise.addResult(std::move(result));
    }));
}

void CheckpointLoader::cancel()
{
    m_jobs.invalidate();
    m_pendingPath.clear();
}

} // namespace spark
