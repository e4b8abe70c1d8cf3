#include "views/plan/plancontroller.h"

#include "core/io/checkpoint.h"
#include "core/plan/matchentry.h"
#include "core/plan/nameregex.h"
#include "core/plan/preset.h"
#include "core/plan/presetkept.h"
#include "core/quant/roundingmethod.h"
#include "views/document/document.h"
#include "views/plan/planeditcommand.h"
#include "views/plan/roundingrulepreview.h"
#include "views/shared/formatting.h"

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

QStringList nonEmpty(QStringList list)
{
    list.removeIf([](const QString& s) { return s.trimmed().isEmpty(); });
    return list;
}

QString kindLabel(PlanList list)
{
    switch (list.id) {
    case PlanList::Targets:
        return PlanController::tr("target");
    case PlanList::Schemes:
        return PlanController::tr("scheme rule");
    case PlanList::Roundings:
        return PlanController::tr("rounding rule");
    default:
        return PlanController::tr("ignore");
    }
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

QStringList PlanController::presetEntries(PlanList list) const
{
    if (list == PlanList::Roundings) {
        return {};
    }
    const EntryKind kind = list.entryKind();
    std::string name = m_edits.preset.toStdString();
    if (name == "auto") {
        name = autoPresetName(detectArchitecture(m_config));
    }
    QStringList out;
    if (const Preset* preset = findPreset(name)) {
        const auto& entries = kind == EntryKind::Target   ? preset->targets
                              : kind == EntryKind::Scheme ? preset->schemes
                                                          : preset->ignore;
        for (const auto& e : entries) {
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
        m_tensors = snapshot->checkpoint->tensorInfos();
    }
    // Entries written for one draft mean nothing for another: start afresh.
    m_undo->clear();
    m_edits = PlanEdits{};
    Q_EMIT editsChanged();
    recomputeNow();
}

QStringList& PlanController::entriesOf(PlanEdits& edits, PlanList list) const
{
    switch (list.id) {
    case PlanList::Targets:
        return edits.targets;
    case PlanList::Schemes:
        return edits.schemes;
    case PlanList::Roundings:
        return edits.roundings;
    default:
        return edits.ignore;
    }
}

const QStringList& PlanController::userEntries(PlanList list) const
{
    return entriesOf(const_cast<PlanEdits&>(m_edits), list);
}

void PlanController::edit(const PlanEdits& requested, const QString& text, const QString& mergeKey)
{
    if (requested == m_edits) {
        return;
    }
    PlanEdits after = requested;
    // The budget record describes the rules the allocation gave: an edit that keeps it but changes the
    // plan makes it stale.
    if (after.budget && after.budget == m_edits.budget) {
        after.budget.reset();
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

int PlanController::addEntry(PlanList list, const QString& text)
{
    PlanEdits after = m_edits;
    entriesOf(after, list).append(text);
    edit(after, tr("Add %1 entry").arg(kindLabel(list)));
    return static_cast<int>(entriesOf(m_edits, list).size()) - 1;
}

void PlanController::setEntry(PlanList list, int index, const QString& text, const QString& mergeKey)
{
    PlanEdits after = m_edits;
    auto& entries = entriesOf(after, list);
    if (index < 0 || index >= entries.size()) {
        return;
    }
    entries[index] = text;
    edit(after, tr("Edit %1 entry").arg(kindLabel(list)), mergeKey);
}

void PlanController::removeEntry(PlanList list, int index)
{
    PlanEdits after = m_edits;
    auto& entries = entriesOf(after, list);
    if (index < 0 || index >= entries.size()) {
        return;
    }
    entries.removeAt(index);
    edit(after, tr("Remove %1 entry").arg(kindLabel(list)));
}

bool PlanController::moveEntry(PlanList list, int index, int delta)
{
    PlanEdits after = m_edits;
    auto& entries = entriesOf(after, list);
    const int to = index + delta;
    if (index < 0 || index >= entries.size() || to < 0 || to >= entries.size()) {
        return false;
    }
    entries.move(index, to);
    edit(after, tr("Move %1 entry").arg(kindLabel(list)));
    return true;
}

void PlanController::setTargetLayers(std::optional<int> layers)
{
    PlanEdits after = m_edits;
    after.targetLayers = layers;
    edit(after, tr("Target layers"));
}

void PlanController::setDefaultScheme(const QString& name)
{
    const auto* scheme = findWeightScheme(name.toStdString());
    if (!scheme || scheme->family != SchemeFamily::IntSymmetric) {
        return;
    }
    PlanEdits after = m_edits;
    after.defaultScheme = schemeText(*scheme);
    edit(after, tr("Default scheme %1").arg(after.defaultScheme));
}

void PlanController::setDefaultRounding(const QString& name)
{
    const auto* method = findRoundingMethod(name.toStdString());
    if (!method) {
        return;
    }
    PlanEdits after = m_edits;
    after.rounding = roundingText(*method);
    edit(after, tr("Rounding %1").arg(after.rounding));
}

bool PlanController::setModuleScheme(const QString& module, const QString& scheme, QString* message)
{
    const auto* wanted = findWeightScheme(scheme.toStdString());
    const auto* planned = m_plan ? m_plan->findModule(module.toStdString()) : nullptr;
    if (!wanted || !planned || !planned->isLinear()) {
        if (message) {
            *message = tr("%1 is not a Linear module of this plan.").arg(module);
        }
        return false;
    }
    // One rule per module, on its exact vLLM name (fused partners share it): replace the user's earlier one.
    const QString entry = QString::fromStdString(nameregex::exactEntry(planned->vllmName));
    PlanEdits after = m_edits;
    after.schemes.removeIf([&](const QString& rule) { return rule.startsWith(entry + QLatin1Char('=')); });
    after.schemes.append(entry + QLatin1Char('=') + schemeText(*wanted));
    const auto trial = computePlan(after);
    const auto* result = trial->findModule(module.toStdString());
    if (!result || result->scheme != wanted) {
        if (message) {
            *message =
                tr("%1 cannot take %2: %3")
                    .arg(module, schemeText(*wanted), QString::fromStdString(result ? result->reason : ""));
        }
        return false;
    }
    QStringList partners;
    for (const auto& m : trial->modules) {
        if (m.vllmName == planned->vllmName && m.name != planned->name) {
            partners.append(QString::fromStdString(m.name));
        }
    }
    edit(after, tr("%1 to %2").arg(module, schemeText(*wanted)));
    if (message) {
        *message = partners.isEmpty()
                       ? QString()
                       : tr("Fused partners follow: %1.").arg(partners.join(QStringLiteral(", ")));
    }
    return true;
}

PlanEdits PlanController::editsFor(const PlanOptions& options)
{
    const auto toQt = [](const std::vector<std::string>& list) {
        QStringList out;
        for (const auto& s : list) {
            out.append(QString::fromStdString(s));
        }
        return out;
    };
    PlanEdits edits;
    edits.preset = QString::fromStdString(options.preset);
    edits.targets = toQt(options.targets);
    edits.ignore = toQt(options.ignore);
    edits.schemes = toQt(options.schemes);
    // The controls show canonical names; an unknown one is kept for makePlan() to report.
    const auto* rounding = findRoundingMethod(options.rounding);
    edits.rounding = QString::fromStdString(rounding ? std::string(rounding->name) : options.rounding);
    edits.roundings = toQt(options.roundings);
    edits.targetLayers = options.targetLayers;
    edits.budget = options.budget;
    if (const auto* scheme = intSymmetricScheme(options.bits, options.groupSize)) {
        edits.defaultScheme = schemeText(*scheme);
    }
    return edits;
}

void PlanController::loadPlanOptions(const PlanOptions& options, const QString& text)
{
    edit(editsFor(options), text);
    recomputeNow();
    m_undo->setClean();
}

bool PlanController::isModified() const
{
    return !m_undo->isClean();
}

void PlanController::markSaved()
{
    m_undo->setClean();
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
    // A row just added and not yet typed in is no rule yet (it read as an invalid one the moment Add was
    // pressed).
    options.schemes = toStd(nonEmpty(edits.schemes));
    options.rounding = edits.rounding.toStdString();
    options.roundings = toStd(nonEmpty(edits.roundings));
    options.targetLayers = edits.targetLayers;
    options.budget = edits.budget;
    if (const auto* scheme = findWeightScheme(edits.defaultScheme.toStdString());
        scheme && scheme->family == SchemeFamily::IntSymmetric) {
        options.bits = scheme->bits;
        options.groupSize = scheme->groupSize;
    }
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
    m_roundingPreviews = m_plan ? std::make_shared<const std::vector<EntryPreview>>(
                                      previewRoundingRules(*m_plan, m_edits.roundings))
                                : nullptr;
    publishDecisions();
    Q_EMIT planChanged();
}

void PlanController::publishDecisions()
{
    if (!m_plan) {
        return;
    }
    std::vector<TensorAnalysisUpdate> updates;
    const auto presetKept = presetKeptModules(*m_plan);
    for (const auto& module : m_plan->modules) {
        const auto kept = presetKept.find(module.name);
        const bool quantized = module.decision == PlanDecision::Quantize;
        const QString decision = quantized ? schemeText(*module.scheme) : tr("keep");
        const QString rounding = quantized && module.rounding && module.rounding != &rtnRounding()
                                     ? roundingText(*module.rounding)
                                     : QString();
        for (const auto& tensor : module.tensors) {
            TensorAnalysisUpdate update;
            update.tensor = QString::fromStdString(tensor);
            update.decision = decision;
            update.rounding = rounding;
            update.presetKeptBy = kept == presetKept.end() ? QString() : QString::fromStdString(kept->second);
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
