#pragma once

#include "core/plan/entrypreview.h"
#include "core/plan/quantplan.h"
#include "views/plan/planedits.h"
#include "views/plan/planlist.h"

#include <QObject>
#include <QStringList>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

class QTimer;
class QUndoStack;

namespace spark {

class Document;

/// @brief The plan of the open document: the user's edits on top of a preset, run through core's
/// makePlan() (header-only, so it re-runs on every edit, debounced while typing), with undo/redo for every
/// edit. Holds no planning logic: decisions, previews, lint and sizes all come from makePlan(). Pushes the
/// decisions into the Document so that the Tensors tab shows them.
class PlanController : public QObject
{
    Q_OBJECT

  public:
    explicit PlanController(Document* document, QObject* parent = nullptr);
    ~PlanController() override;

    QUndoStack* undoStack() const { return m_undo; }
    Document* document() const { return m_document; }
    const PlanEdits& edits() const { return m_edits; }
    /// @brief The user entries of @p list in the current edits.
    const QStringList& userEntries(PlanList list) const;
    /// @brief What the current edits and scheme ask of core's makePlan() (also what `plan` and
    /// `quantize` take on the command line).
    PlanOptions planOptions() const { return optionsFor(m_edits); }
    /// @brief What @p edits ask of makePlan() for the open draft.
    PlanOptions optionsFor(const PlanEdits& edits) const;
    /// @brief The plan of the current edits (after the debounce), or null when nothing is open.
    std::shared_ptr<const QuantPlan> plan() const { return m_plan; }
    /// @brief The plan an export may use: nullptr when there is none, it has errors, or an edit is still
    /// waiting to be planned.
    const QuantPlan* exportablePlan() const;
    /// @brief True while an edit waits for the debounce to re-plan.
    bool isPending() const;
    /// @brief The preset's own entries of @p list for the current edits (shown read-only above the user's;
    /// presets have no rounding rules).
    QStringList presetEntries(PlanList list) const;
    /// @brief The preview of each user rounding rule of the current plan, in order (core's QuantPlan::entries
    /// holds those of the other lists); null when there is no plan. Shared, like the plan, so that a model
    /// holding it stays valid until it refreshes.
    std::shared_ptr<const std::vector<EntryPreview>> roundingPreviews() const { return m_roundingPreviews; }

    /// @brief Pushes an undoable edit from the current state to @p after. Edits with the same non-empty
    /// @p mergeKey in a row (keystrokes in one entry) merge into one undo step.
    void edit(const PlanEdits& after, const QString& text, const QString& mergeKey = {});
    /// @brief Makes @p edits current without touching the undo stack (PlanEditCommand calls this).
    void applyEdits(const PlanEdits& edits);

    void setPreset(const QString& preset);
    /// @brief Appends a user entry to @p list. @return its index.
    int addEntry(PlanList list, const QString& text);
    /// @brief Replaces user entry @p index; edits with the same non-empty @p mergeKey in a row (keystrokes
    /// of one editing session) merge into one undo step.
    void setEntry(PlanList list, int index, const QString& text, const QString& mergeKey = {});
    void removeEntry(PlanList list, int index);
    /// @brief Moves user entry @p index by @p delta (-1 up, +1 down). @return false at either end.
    bool moveEntry(PlanList list, int index, int delta);
    void setTargetLayers(std::optional<int> layers);

    /// @brief Flips the decision of Linear module @p module (checkpoint name) by editing the entries: keep
    /// adds its exact vLLM name to the ignore entries; quantize removes the user ignore entries that keep
    /// it (only when they keep nothing else) and adds its name to the targets when no target selects it.
    /// @return false, with @p message saying why, when no entry edit can flip it (a preset ignore entry,
    /// a shape or vLLM limit); otherwise @p message names fused partners that flipped with it.
    bool toggleModule(const QString& module, QString* message);

    /// @brief Sets the default scheme (an undoable edit): @p name must be an integer symmetric scheme
    /// (W4A16, W4A16:g32, ..., W8A16:channel), the ones --bits/--group express.
    void setDefaultScheme(const QString& name);
    /// @brief Sets the rounding method of quantized modules no rounding rule names (an undoable edit):
    /// @p name must be a rounding method (roundingMethods(), any case).
    void setDefaultRounding(const QString& name);
    /// @brief Gives Linear module @p module (checkpoint name) and its fused partners @p scheme (BF16 keeps
    /// it) with a scheme rule on its exact vLLM name, replacing an earlier rule of the user for the same
    /// name. @return false, with @p message saying why, when the plan cannot apply it (a vLLM limit, the
    /// shape gate); otherwise @p message names fused partners that follow.
    bool setModuleScheme(const QString& module, const QString& scheme, QString* message);
    /// @brief The edits that ask makePlan() for @p options (the inverse of planOptions(); the tensor-parallel
    /// degree is not an edit and is dropped).
    static PlanEdits editsFor(const PlanOptions& options);
    /// @brief Replaces the edits with @p options read from a plan file, as one undoable step, and marks the
    /// result unmodified (it is what the file holds). Re-plans at once.
    void loadPlanOptions(const PlanOptions& options, const QString& text);
    /// @brief True when the edits differ from the last saved or loaded plan (or from a fresh draft's).
    bool isModified() const;
    /// @brief Marks the current edits as saved (the undo stack's clean state).
    void markSaved();

    /// @brief Re-plans now instead of after the debounce.
    void recomputeNow();
    /// @brief Writes the plan's decisions into the Document again (after it cleared its analysis).
    void publishDecisions();

  Q_SIGNALS:
    /// The edits changed (an edit, undo or redo); the plan follows after the debounce.
    void editsChanged();
    /// A new plan is in place (or none, when the document closed).
    void planChanged();

  private:
    void onSnapshotChanged();
    void scheduleRecompute();
    std::shared_ptr<const QuantPlan> computePlan(const PlanEdits& edits) const;
    QStringList& entriesOf(PlanEdits& edits, PlanList list) const;

    Document* m_document;
    QUndoStack* m_undo;
    QTimer* m_debounce;
    PlanEdits m_edits;
    std::shared_ptr<const QuantPlan> m_plan;
    std::shared_ptr<const std::vector<EntryPreview>> m_roundingPreviews; ///< of m_plan's rounding rules
    bool m_hasCheckpoint = false;
    nlohmann::json m_config;
    std::vector<TensorInfo> m_tensors;
};

} // namespace spark
