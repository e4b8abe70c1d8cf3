#include "views/plan/planeditcommand.h"

#include "views/plan/plancontroller.h"

namespace spark {

namespace {

constexpr int kMergeableId = 0x504c; // "PL"

} // namespace

PlanEditCommand::PlanEditCommand(PlanController* controller, PlanEdits before, PlanEdits after,
                                 const QString& text, QString mergeKey)
    : QUndoCommand(text), m_controller(controller), m_before(std::move(before)), m_after(std::move(after)),
      m_mergeKey(std::move(mergeKey))
{
}

void PlanEditCommand::undo()
{
    m_controller->applyEdits(m_before);
}

void PlanEditCommand::redo()
{
    m_controller->applyEdits(m_after);
}

int PlanEditCommand::id() const
{
    return m_mergeKey.isEmpty() ? -1 : kMergeableId;
}

bool PlanEditCommand::mergeWith(const QUndoCommand* other)
{
    const auto* next = static_cast<const PlanEditCommand*>(other);
    if (m_mergeKey.isEmpty() || next->m_mergeKey != m_mergeKey) {
        return false;
    }
    m_after = next->m_after;
    return true;
}

} // namespace spark
