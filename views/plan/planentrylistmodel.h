#pragma once

#include "core/plan/entrypreview.h"
#include "views/plan/planlist.h"

#include <QAbstractTableModel>
#include <QStringList>
#include <memory>

namespace spark {

class PlanController;
struct QuantPlan;

/// @brief One list of the plan (the `targets` or `ignore` entries, the scheme or the rounding rules): the
/// preset's (read-only, shown first) then the user's (editable in place), each with its live preview from
/// makePlan(): how many modules it matches, its regex error with the position, or why it looks wrong
/// (matches nothing, unescaped dot).
class PlanEntryListModel : public QAbstractTableModel
{
    Q_OBJECT

  public:
    enum Column : int { Entry, Matches, Source, Problem, ColumnCount };
    enum ItemRole : int {
        UserIndexRole = Qt::UserRole + 1, ///< index into the user's entries, -1 for a preset entry
        HasErrorRole,                     ///< bool: the entry does not compile
        MatchedModulesRole,               ///< QStringList of checkpoint modules the entry matches
    };

    PlanEntryListModel(PlanController* controller, PlanList list, QObject* parent = nullptr);

    PlanList list() const { return m_list; }
    /// @brief The row of user entry @p index.
    int rowOfUserEntry(int index) const { return static_cast<int>(m_preset.size()) + index; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    /// Editing a user entry's text goes through the controller (undoable).
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

    /// @brief Starts an editing session: the edits setData() makes until the next session merge into one
    /// undo step (live typing commits on every keystroke).
    void beginEditSession() { ++m_session; }

  private:
    void refresh();
    const EntryPreview* previewAt(int row) const;

    PlanController* m_controller;
    PlanList m_list;
    QStringList m_preset;
    QStringList m_user;
    std::shared_ptr<const QuantPlan> m_plan;
    std::shared_ptr<const std::vector<EntryPreview>> m_roundingPreviews; ///< keeps the rows' previews valid
    std::vector<const EntryPreview*> m_previews; ///< by row, null while a preview is pending
    int m_session = 0;
};

} // namespace spark
