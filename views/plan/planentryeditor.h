#pragma once

#include "core/plan/entrypreview.h"

#include <QWidget>

class QLabel;
class QTableView;
class QToolButton;

namespace spark {

class PlanController;
class PlanEntryListModel;

/// @brief One editable entry list of the plan (targets, ignore or scheme rules): a title line with buttons
/// to add, remove and reorder entries, and the table below it, the preset's entries read-only, the user's
/// editable in place with a live preview. The title and the buttons share one line, so that three editors
/// stacked in a 700-pixel window still show five rows each.
class PlanEntryEditor : public QWidget
{
    Q_OBJECT

  public:
    PlanEntryEditor(PlanController* controller, EntryKind kind, QWidget* parent = nullptr);

    /// @brief The list's name, shown left of the buttons.
    void setTitle(const QString& title);
    QString title() const;

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
    QLabel* m_title;
    QToolButton* m_add;
    QToolButton* m_remove;
    QToolButton* m_up;
    QToolButton* m_down;
};

} // namespace spark
