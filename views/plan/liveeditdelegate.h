#pragma once

#include <QStyledItemDelegate>

namespace spark {

/// @brief A line-edit delegate that commits on every keystroke, so the plan's preview follows the text
/// as it is typed instead of when the editor closes. Preset entries (read-only) are drawn in the view
/// palette's muted text colour, readable on light and dark palettes alike.
class LiveEditDelegate : public QStyledItemDelegate
{
    Q_OBJECT

  public:
    explicit LiveEditDelegate(QObject* parent = nullptr);

    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option,
                          const QModelIndex& index) const override;
    void setEditorData(QWidget* editor, const QModelIndex& index) const override;

  protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override;

  Q_SIGNALS:
    /// An editor opened on @p index: edits until the next one belong to one session.
    void editingStarted(const QModelIndex& index) const;
};

} // namespace spark
