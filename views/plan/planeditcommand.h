#pragma once

#include "views/plan/planedits.h"

#include <QUndoCommand>

namespace spark {

class PlanController;

/// @brief One undoable plan edit: the whole PlanEdits before and after. Storing states rather than
/// operations keeps every kind of edit (add, remove, reorder, preset, toggle) correct by construction.
/// Keystrokes in one entry carry the same merge key and collapse into one step.
class PlanEditCommand : public QUndoCommand
{
  public:
    PlanEditCommand(PlanController* controller, PlanEdits before, PlanEdits after, const QString& text,
                    QString mergeKey = {});

    void undo() override;
    void redo() override;
    int id() const override;
    bool mergeWith(const QUndoCommand* other) override;

  private:
    PlanController* m_controller;
    PlanEdits m_before;
    PlanEdits m_after;
    QString m_mergeKey;
};

} // namespace spark
