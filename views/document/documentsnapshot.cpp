#include "views/document/documentsnapshot.h"

#include "core/audit/checker.h"
#include "core/io/checkpoint.h"
#include "core/plan/architecture.h"
#include "core/plan/draftlayout.h"

#include <unordered_map>

namespace spark {

namespace {

QString toQString(const std::string& text)
{
    return QString::fromStdString(text);
}

void finish(DocumentSnapshot& snapshot)
{
    snapshot.totalBytes = 0;
    snapshot.totalParams = 0;
    for (const auto& row : snapshot.rows) {
        snapshot.totalBytes += row.bytes;
        snapshot.totalParams += row.params;
    }
    snapshot.rowByName.clear();
    snapshot.rowByName.reserve(static_cast<qsizetype>(snapshot.rows.size()));
    for (std::size_t i = 0; i < snapshot.rows.size(); ++i) {
        auto& row = snapshot.rows[i];
        row.share = snapshot.totalBytes
                        ? static_cast<double>(row.bytes) / static_cast<double>(snapshot.totalBytes)
                        : 0.0;
        snapshot.rowByName.insert(row.name, static_cast<int>(i));
    }
}

/// True when @p checkpoint is already quantized: a quantization_config, or tensors only a quantizer writes.
bool looksQuantized(const Checkpoint& checkpoint)
{
    if (locateQuantizationConfig(checkpoint.config()).present) {
        return true;
    }
    for (const auto& tensor : checkpoint.tensors()) {
        const auto& name = tensor.info.name;
        for (const std::string_view suffix : {".weight_packed", ".weight_scale"}) {
            if (name.size() > suffix.size() &&
                name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
                return true;
            }
        }
    }
    return false;
}

/// `check`'s report on an already-quantized checkpoint (headers, config and a few small tensors only, so
/// it runs with the open, in the loader's thread); null for a BF16 draft or when the audit itself fails.
std::shared_ptr<const CheckReport> auditOf(const Checkpoint& checkpoint)
{
    if (!looksQuantized(checkpoint)) {
        return nullptr;
    }
    try {
        return std::make_shared<const CheckReport>(checkCheckpoint(checkpoint));
    } catch (const std::exception&) {
        // checkCheckpoint() reports hostile input as findings; anything else leaves the draft unaudited
        // rather than refusing to open it.
        return nullptr;
    }
}

} // namespace

std::shared_ptr<const DocumentSnapshot>
DocumentSnapshot::fromCheckpoint(std::shared_ptr<const Checkpoint> checkpoint, const QString& sourcePath)
{
    auto snapshot = std::make_shared<DocumentSnapshot>();
    snapshot->sourcePath = sourcePath;
    snapshot->folder = QString::fromStdString(checkpoint->folder().string());
    const auto arch = detectArchitecture(checkpoint->config());
    snapshot->architectureId = toQString(arch.id);
    snapshot->architectureName = toQString(arch.displayName);
    // Roles come from the same module description the plan uses, so the table and the plan agree.
    std::vector<TensorInfo> infos;
    infos.reserve(checkpoint->tensors().size());
    for (const auto& tensor : checkpoint->tensors()) {
        infos.push_back(tensor.info);
    }
    std::unordered_map<std::string, ModuleRole> roles;
    for (const auto& module : describeModules(arch, infos, 0)) {
        for (const auto& name : module.tensors) {
            roles.emplace(name, module.role);
        }
    }
    snapshot->audit = auditOf(*checkpoint);
    snapshot->rows.reserve(checkpoint->tensors().size());
    for (const auto& tensor : checkpoint->tensors()) {
        const auto& info = tensor.info;
        TensorRow row;
        row.name = toQString(info.name);
        row.module = toQString(moduleOfTensor(info.name));
        row.group = toQString(groupOf(info.name));
        const auto role = roles.find(info.name);
        row.role = role == roles.end() ? ModuleRole::Buffer : role->second;
        row.dtype = toQString(std::string(dtypeName(info.dtype)));
        row.shape = info.shape;
        row.shapeText = toQString(info.shapeText());
        row.params = info.numel();
        row.bytes = info.byteSize();
        row.file = toQString(checkpoint->fileNameOf(tensor));
        row.begin = info.begin;
        row.end = info.end;
        row.dataStart = checkpoint->fileOf(tensor).header().dataStart();
        if (snapshot->audit) {
            if (const auto* module = snapshot->audit->view.moduleOfTensorName(info.name)) {
                row.storedScheme = toQString(module->scheme);
            }
        }
        snapshot->rows.push_back(std::move(row));
    }
    snapshot->checkpoint = std::move(checkpoint);
    finish(*snapshot);
    return snapshot;
}

std::shared_ptr<const DocumentSnapshot> DocumentSnapshot::fromRows(std::vector<TensorRow> rows)
{
    auto snapshot = std::make_shared<DocumentSnapshot>();
    snapshot->rows = std::move(rows);
    snapshot->architectureId = QStringLiteral("generic");
    finish(*snapshot);
    return snapshot;
}

} // namespace spark
