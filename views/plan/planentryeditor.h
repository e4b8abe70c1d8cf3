#pragma once

#include "views/plan/planlist.h"

#include <QWidget>
#include <vector>

class QLabel;
class QStackedWidget;
class QTabBar;
class QTableView;
class QToolButton;

namespace spark {

class PlanController;
class PlanEntryListModel;

/// @brief An editable list of the plan (targets, ignore, scheme or rounding rules): a title line with
/// buttons to add, remove and reorder entries, and the table below it, the preset's entries read-only, the
/// user's editable in place with a live preview. The title and the buttons share one line, so that three
/// editors stacked in a 700-pixel window still show five rows each.
///
/// An editor may hold more lists (addList()): the title line then is a tab bar that switches the table
/// below and the list the buttons act on. The scheme and the rounding rules share one editor this way: two
/// ordered lists of the same shape that a fourth stacked editor would squeeze below five rows.
class PlanEntryEditor : public QWidget
{
    Q_OBJECT

  public:
    PlanEntryEditor(PlanController* controller, PlanList list, QWidget* parent = nullptr);

    /// @brief The name of the first list, shown left of the buttons (its tab once there are more).
    void setTitle(const QString& title);
    /// @brief The name of the list shown.
    QString title() const;
    /// @brief Adds list @p list behind a tab named @p title; the first list keeps the first tab.
    void addList(PlanList list, const QString& title);

    /// @brief The list shown, whose table the buttons act on.
    PlanList currentList() const { return m_pages[m_current].list; }
    void setCurrentList(PlanList list);
    /// @brief The tab bar of the title line; null while the editor holds one list.
    QTabBar* tabBar() const { return m_tabs; }

    /// @brief The model and the table of the list shown.
    PlanEntryListModel* model() const { return m_pages[m_current].model; }
    QTableView* view() const { return m_pages[m_current].view; }
    /// @brief The model and the table of @p list; null when this editor does not hold it.
    PlanEntryListModel* model(PlanList list) const;
    QTableView* view(PlanList list) const;

    /// @brief Adds an entry to the list shown and opens an editor on it.
    void addEntry();
    void removeCurrent();
    void moveCurrent(int delta);

  private:
    struct Page
    {
        PlanList list;
        QString title;
        PlanEntryListModel* model = nullptr;
        QTableView* view = nullptr;
    };
    Page makePage(PlanList list);
    const Page* pageOf(PlanList list) const;
    int currentUserIndex() const;
    void updateButtons();
    // Tab texts carry how many entries of their own each list has, so rules behind a tab are not missed.
    void updateTabTexts();

    PlanController* m_controller;
    std::vector<Page> m_pages;
    int m_current = 0;
    QStackedWidget* m_stack;
    QLabel* m_title;
    QTabBar* m_tabs = nullptr;
    QToolButton* m_add;
    QToolButton* m_remove;
    QToolButton* m_up;
    QToolButton* m_down;
};

} // namespace spark
