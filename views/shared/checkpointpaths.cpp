#include "views/shared/checkpointpaths.h"

#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QLineEdit>
#include <QMimeData>
#include <QUrl>

namespace spark {

bool isCheckpointPath(const QString& path)
{
    const QFileInfo info(path);
    if (info.isDir()) {
        return true;
    }
    return info.isFile() && (path.endsWith(QStringLiteral(".safetensors"), Qt::CaseInsensitive) ||
                             path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive));
}

bool isCapturePath(const QString& path)
{
    const QFileInfo info(path);
    const QDir folder(info.isDir() ? info.absoluteFilePath() : info.absolutePath());
    return folder.exists(QStringLiteral("hidden_states.safetensors")) ||
           folder.exists(QStringLiteral("capture.json")) ||
           !folder
                .entryList({QStringLiteral("hs_*.safetensors"), QStringLiteral("*.safetensors.lock")},
                           QDir::Files)
                .isEmpty();
}

QString droppedLocalPath(const QMimeData* mime)
{
    if (!mime || !mime->hasUrls() || mime->urls().size() != 1 || !mime->urls().front().isLocalFile()) {
        return {};
    }
    return mime->urls().front().toLocalFile();
}

CheckpointDropFilter::CheckpointDropFilter(QLineEdit* edit) : QObject(edit), m_edit(edit)
{
    edit->setAcceptDrops(true);
    edit->installEventFilter(this);
}

bool CheckpointDropFilter::eventFilter(QObject* watched, QEvent* event)
{
    if (watched != m_edit) {
        return false;
    }
    switch (event->type()) {
    case QEvent::DragEnter:
    case QEvent::DragMove: {
        auto* drag = static_cast<QDragMoveEvent*>(event);
        if (isCheckpointPath(droppedLocalPath(drag->mimeData()))) {
            drag->acceptProposedAction();
        } else {
            drag->ignore();
        }
        return true;
    }
    case QEvent::Drop: {
        auto* drop = static_cast<QDropEvent*>(event);
        const QString path = droppedLocalPath(drop->mimeData());
        if (!isCheckpointPath(path)) {
            drop->ignore();
            return true;
        }
        drop->acceptProposedAction();
        m_edit->setText(path);
        return true;
    }
    default:
        return false;
    }
}

} // namespace spark
