#include "views/document/checkpointloader.h"

#include "core/io/checkpoint.h"
#include "core/io/ioerror.h"

#include <QFileInfo>
#include <exception>

namespace spark {

namespace {

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

CheckpointLoader::CheckpointLoader(QObject* parent)
    : QObject(parent), m_job(
                           this, [](double) {}, [this](const Outcome& outcome) { onFinished(outcome); })
{
}

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
    m_path = path;
    m_job.start([path](const ProgressFn&) {
        Outcome outcome;
        outcome.snapshot = openNow(path, &outcome.error);
        return outcome;
    });
}

void CheckpointLoader::cancel()
{
    m_job.cancel();
}

void CheckpointLoader::onFinished(const Outcome& outcome)
{
    if (outcome.snapshot) {
        Q_EMIT loaded(m_path, outcome.snapshot);
    } else if (!outcome.error.isEmpty()) {
        Q_EMIT failed(m_path, outcome.error);
    }
}

} // namespace spark
