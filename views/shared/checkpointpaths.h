#pragma once

#include <QObject>
#include <QString>

class QLineEdit;
class QMimeData;

namespace spark {

/// @brief True for what the app opens as a checkpoint: a folder, a .safetensors file or an index (.json).
bool isCheckpointPath(const QString& path);

/// @brief True when @p path is (or is the folder of) a capture of target hidden states rather than a draft:
/// `hidden_states.safetensors` (what `demo --capture` and the reference tooling write), a `capture.json`
/// sidecar or speculators' `hs_*.safetensors`. Such a file opens as a "Generic" checkpoint, which tells a
/// newcomer nothing.
bool isCapturePath(const QString& path);

/// @brief The one local path a drag carries, or empty when it carries anything else (several files, a web
/// link, text).
QString droppedLocalPath(const QMimeData* mime);

/// @brief Lets a checkpoint be dropped on a path field: a drag of one checkpoint path (isCheckpointPath())
/// replaces the field's text with that path. Without it a QLineEdit inserts the drag's text, a file:// URL,
/// at the cursor. Installs itself on @p edit, which owns it.
class CheckpointDropFilter : public QObject
{
    Q_OBJECT

  public:
    explicit CheckpointDropFilter(QLineEdit* edit);

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    QLineEdit* m_edit;
};

} // namespace spark
