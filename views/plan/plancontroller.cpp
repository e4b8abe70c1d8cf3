#include "views/plan/plancontroller.h"

#include "views/shared/formatting.h"

#include "core/io/checkpoint.h"
#include "core/plan/matchentry.h"
#include "core/plan/preset.h"
#include "views/document/document.h"
#include "views/plan/planeditcommand.h"

#include <QSet>
#include <QTimer>
#include <QUndoStack>
#include <algorithm>

namespace spark {

namespace {

// Long enough that a burst of keystrokes plans once, short enough to feel live.
constexpr int kDebounceMs = 150;

std::vector<std::string> toStd(const QStringList& list)
{
    std::vector<std::string> out;
    out.reserve(static_cast<std::size_t>(list.size()));
    for (const auto& s : list) {
        out.push_back(s.toStdString());
    }
    return out;
}

QString kindLabel(EntryKind kind)
{
    return kind == EntryKind::Target ? PlanController::tr("target") : PlanController::tr("ignore");
}

} // namespace

PlanController::PlanController(Document* document, QObject* parent)
    : QObject(parent), m_document(document), m_undo(new QUndoStack(this)), m_debounce(new QTimer(this))
{
    m_debounce->setSingleShot(true);
    m_debounce->setInterval(kDebounceMs);
    connect(m_debounce, &QTimer::timeout, this, &PlanController::recomputeNow);
    connect(m_document, &Document::snapshotChanged, this, &PlanController::onSnapshotChanged);
    onSnapshotChanged();
}

PlanController::~PlanController() = default;

const QuantPlan* PlanController::exportablePlan() const
{
    if (!m_plan || !m_plan->errors.empty() || isPending()) {
        return nullptr;
    }
    return m_plan.get();
}

bool PlanController::isPending() const
{
    return m_debounce->isActive();
}

QStringList PlanController::presetEntries(EntryKind kind) const
{
    std::string name = m_edits.preset.toStdString();
    if (name == "auto") {
        name = autoPresetName(detectArchitecture(m_config));
    }
    QStringList out;
    if (const Preset* preset = findPreset(name)) {
        for (const auto& e : kind == EntryKind::Target ? preset->targets : preset->ignore) {
            out.append(QString::fromStdString(e));
        }
    }
    return out;
}

void PlanController::onSnapshotChanged()
{
    const auto snapshot = m_document->snapshot();
    m_tensors.clear();
    m_config = nlohmann::json::object();
    m_hasCheckpoint = snapshot && snapshot->checkpoint;
    if (m_hasCheckpoint) {
        m_config = snapshot->checkpoint->config();
        for (const auto& t : snapshot->checkpoint->tensors()) {
            m_tensors.push_back(t.info);
        }
    }
    // Entries written for one draft mean nothing for another: start afresh.
    m_undo->clear();
    m_edits = PlanEdits{};
    Q_EMIT editsChanged();
    recomputeNow();
}

QStringList& PlanController::entriesOf(PlanEdits& edits, EntryKind kind) const
{
    return kind == EntryKind::Target ? edits.targets : edits.ignore;
}

void PlanController::edit(const PlanEdits& after, const QString& text, const QString& mergeKey)
{
    if (after == m_edits) {
        return;
    }
    m_undo->push(new PlanEditCommand(this, m_edits, after, text, mergeKey));
}

void PlanController::applyEdits(const PlanEdits& edits)
{
    m_edits = edits;
    Q_EMIT editsChanged();
    scheduleRecompute();
}

void PlanController::setPreset(const QString& preset)
{
    PlanEdits after = m_edits;
    after.preset = preset;
    edit(after, tr("Preset %1").arg(preset));
}

int PlanController::addEntry(EntryKind kind, const QString& text)
{
    PlanEdits after = m_edits;
    entriesOf(after, kind).append(text);
    edit(after, tr("Add %1 entry").arg(kindLabel(kind)));
    return static_cast<int>(entriesOf(m_edits, kind).size()) - 1;
}

void PlanController::setEntry(EntryKind kind, int index, const QString& text, const QString& mergeKey)
{
    PlanEdits after = m_edits;
    auto& list = entriesOf(after, kind);
    if (index < 0 || index >= list.size()) {
        return;
    }
    list[index] = text;
    edit(after, tr("Edit %1 entry").arg(kindLabel(kind)), mergeKey);
}

void PlanController::removeEntry(EntryKind kind, int index)
{
    PlanEdits after = m_edits;
    auto& list = entriesOf(after, kind);
    if (index < 0 || index >= list.size()) {
        return;
    }
    list.removeAt(index);
    edit(after, tr("Remove %1 entry").arg(kindLabel(kind)));
}

bool PlanController::moveEntry(EntryKind kind, int index, int delta)
{
    PlanEdits after = m_edits;
    auto& list = entriesOf(after, kind);
    const int to = index + delta;
    if (index < 0 || index >= list.size() || to < 0 || to >= list.size()) {
        return false;
    }
    list.move(index, to);
    edit(after, tr("Move %1 entry").arg(kindLabel(kind)));
    return true;
}

void PlanController::setTargetLayers(std::optional<int> layers)
{
    PlanEdits after = m_edits;
    after.targetLayers = layers;
    edit(after, tr("Target layers"));
}

void PlanController::setScheme(const QuantScheme& scheme)
{
    if (scheme.bits == m_scheme.bits && scheme.groupSize == m_scheme.groupSize) {
        return;
    }
    m_scheme = scheme;
    recomputeNow();
}

void PlanController::scheduleRecompute()
{
    m_debounce->start();
}

PlanOptions PlanController::optionsFor(const PlanEdits& edits) const
{
    PlanOptions options;
    options.preset = edits.preset.toStdString();
    options.targets = toStd(edits.targets);
    options.ignore = toStd(edits.ignore);
    options.targetLayers = edits.targetLayers;
    options.bits = m_scheme.bits;
    options.groupSize = m_scheme.groupSize;
    return options;
}

std::shared_ptr<const QuantPlan> PlanController::computePlan(const PlanEdits& edits) const
{
    if (!m_hasCheckpoint) {
        return nullptr;
    }
    return std::make_shared<const QuantPlan>(makePlan(m_config, m_tensors, optionsFor(edits)));
}

void PlanController::recomputeNow()
{
    m_debounce->stop();
    m_plan = computePlan(m_edits);
    publishDecisions();
    Q_EMIT planChanged();
}

void PlanController::publishDecisions()
{
    if (!m_plan) {
        return;
    }
    std::vector<TensorAnalysisUpdate> updates;
    for (const auto& module : m_plan->modules) {
        const QString decision = module.decision == PlanDecision::Quantize
                                     ? schemeText(*module.scheme)
                                     : tr("keep");
        for (const auto& tensor : module.tensors) {
            TensorAnalysisUpdate update;
            update.tensor = QString::fromStdString(tensor);
            update.decision = decision;
            updates.push_back(std::move(update));
        }
    }
    m_document->setAnalysis(updates);
}

bool PlanController::toggleModule(const QString& module, QString* message)
{
    if (isPending()) {
        recomputeNow();
    }
    const PlannedModule* target = m_plan ? m_plan->findModule(module.toStdString()) : nullptr;
    if (!target || !target->isLinear()) {
        *message = tr("%1 is not a Linear module: only Linears can be quantized.").arg(module);
        return false;
    }
    const QString name = QString::fromStdString(target->vllmName);
    const bool quantize = target->decision != PlanDecision::Quantize;
    PlanEdits after = m_edits;
    if (!quantize) {
        after.ignore.append(name);
    } else {
        // The Linears that share this vLLM layer (q/k/v of a fused qkv_proj) decide together.
        QSet<QString> unit;
        for (const auto& m : m_plan->modules) {
            if (m.isLinear() && m.vllmName == target->vllmName) {
                unit.insert(QString::fromStdString(m.name));
            }
        }
        // Remove the user's ignore entries that keep this layer, unless they keep other modules too:
        // removing a broad pattern behind the user's back would flip far more than they asked.
        const std::size_t presetCount = static_cast<std::size_t>(presetEntries(EntryKind::Target).size());
        std::vector<const EntryPreview*> userIgnore;
        for (std::size_t i = presetCount; i < m_plan->entries.size(); ++i) {
            if (m_plan->entries[i].kind == EntryKind::Ignore && m_plan->entries[i].source == "--ignore") {
                userIgnore.push_back(&m_plan->entries[i]);
            }
        }
        QList<int> remove;
        for (int i = 0; i < static_cast<int>(userIgnore.size()) && i < after.ignore.size(); ++i) {
            const auto& preview = *userIgnore[static_cast<std::size_t>(i)];
            bool hits = false;
            bool others = false;
            for (const auto& match : preview.matches) {
                const bool inUnit = unit.contains(QString::fromStdString(match.module));
                hits = hits || inUnit;
                others = others || !inUnit;
            }
            if (!hits) {
                continue;
            }
            if (others) {
                *message = tr("%1 is kept by the ignore entry '%2', which keeps other modules too: edit that "
                              "entry in the Plan tab.")
                               .arg(module, after.ignore[i]);
                return false;
            }
            remove.prepend(i);
        }
        for (const int i : std::as_const(remove)) {
            after.ignore.removeAt(i);
        }
        auto trial = computePlan(after);
        const PlannedModule* now = trial->findModule(target->name);
        if (now && now->decision != PlanDecision::Quantize && now->reason == "no target entry selects it") {
            after.targets.append(name);
            trial = computePlan(after);
            now = trial->findModule(target->name);
        }
        if (!now || now->decision != PlanDecision::Quantize) {
            *message = tr("%1 cannot be quantized by editing your entries: %2")
                           .arg(module, now ? QString::fromStdString(now->reason) : QString());
            return false;
        }
    }
    // Name the partners that flip with it, so a fused group changing together is no surprise.
    const auto trial = computePlan(after);
    QStringList partners;
    for (const auto& m : trial->modules) {
        const PlannedModule* before = m_plan->findModule(m.name);
        if (before && before->decision != m.decision && m.name != target->name) {
            partners.append(QString::fromStdString(m.name));
        }
    }
    edit(after, quantize ? tr("Quantize %1").arg(module) : tr("Keep %1").arg(module));
    recomputeNow();
    const QString verb = quantize ? tr("quantized") : tr("kept BF16");
    *message = partners.isEmpty() ? tr("%1 is now %2.").arg(module, verb)
                                  : tr("%1 is now %2, and with it %3 (same vLLM layer %4).")
                                        .arg(module, verb, partners.join(QStringLiteral(", ")), name);
    return true;
}

} // namespace spark
