#pragma once

#include "core/plan/entrypreview.h"

#include <QWidget>

class QPushButton;
class QTableView;

namespace spark {

class PlanController;
class PlanEntryListModel;

/// @brief One editable entry list of the plan (targets or ignore): the preset's entries read-only, the
/// user's editable in place with a live preview, and buttons to add, remove and reorder them.
class PlanEntryEditor : public QWidget
{
    Q_OBJECT

  public:
    PlanEntryEditor(PlanController* controller, EntryKind kind, QWidget* parent = nullptr);

    PlanEntryListModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }

    /// @brief Adds an entry and opens an editor on it.
    void addEntry();
    void removeCurrent();
    void moveCurrent(int delta);

  private:
    int currentUserIndex() const;
    void updateButtons();

    PlanController* m_controller;
    EntryKind m_kind;
    PlanEntryListModel* m_model;
    QTableView* m_view;
    QPushButton* m_add;
    QPushButton* m_remove;
    QPushButton* m_up;
    QPushButton* m_down;
};

} // namespace spark
