#pragma once

#include "views/tensors/tensorrow.h"

#include <QHash>
#include <QString>
#include <memory>
#include <vector>

namespace spark {

class Checkpoint;
struct CheckReport;

/// @brief An opened checkpoint as the GUI sees it: immutable once built, shared between the document,
/// its models and background jobs (which read tensor bytes through checkpoint()).
struct DocumentSnapshot
{
    QString sourcePath;       ///< what the user opened (folder, .safetensors or index file)
    QString folder;           ///< the checkpoint folder
    QString architectureId;   ///< "dspark", "laguna-dflash", "generic"
    QString architectureName; ///< "DSpark (speculators)"
    std::shared_ptr<const Checkpoint> checkpoint; ///< null for snapshots built from rows (tests)
    std::vector<TensorRow> rows;                  ///< sorted by name, like Checkpoint::tensors()
    QHash<QString, int> rowByName;
    std::uint64_t totalBytes = 0;
    std::uint64_t totalParams = 0;
    /// `check`'s report when the checkpoint is already quantized (it has a quantization_config or stores
    /// quantized tensors); null for a BF16 draft. Its view tells each module's stored scheme and decodes it.
    std::shared_ptr<const CheckReport> audit;

    /// @brief True when the open checkpoint is already quantized (audit() is set).
    bool isQuantized() const { return audit != nullptr; }

    /// @brief The row of tensor @p name, or -1.
    int rowOf(const QString& name) const { return rowByName.value(name, -1); }

    /// @brief Derives the rows from an opened checkpoint. Cheap (headers only), but meant to run in the
    /// loader's thread all the same.
    static std::shared_ptr<const DocumentSnapshot>
    fromCheckpoint(std::shared_ptr<const Checkpoint> checkpoint, const QString& sourcePath);

    /// @brief A snapshot of hand-made rows: fills share, totals and the name index.
    static std::shared_ptr<const DocumentSnapshot> fromRows(std::vector<TensorRow> rows);
};

} // namespace spark
