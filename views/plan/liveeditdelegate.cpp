#include "views/plan/liveeditdelegate.h"

#include "views/plan/planentrylistmodel.h"
#include "views/shared/theme.h"

#include <QFont>
#include <QLineEdit>

namespace spark {

LiveEditDelegate::LiveEditDelegate(QObject* parent) : QStyledItemDelegate(parent) {}

QWidget* LiveEditDelegate::createEditor(QWidget* parent, const QStyleOptionViewItem&,
                                        const QModelIndex& index) const
{
    auto* editor = new QLineEdit(parent);
    editor->setFrame(false);
    QFont font = editor->font();
    font.setFamily(QStringLiteral("monospace"));
    font.setStyleHint(QFont::Monospace);
    editor->setFont(font);
    Q_EMIT editingStarted(index);
    // commitData is a signal of the (const) delegate; emitting it from the lambda needs a non-const this.
    auto* self = const_cast<LiveEditDelegate*>(this);
    connect(editor, &QLineEdit::textEdited, self, [self, editor] { Q_EMIT self->commitData(editor); });
    return editor;
}

void LiveEditDelegate::setEditorData(QWidget* editor, const QModelIndex& index) const
{
    auto* line = static_cast<QLineEdit*>(editor);
    const QString text = index.data(Qt::EditRole).toString();
    // The model echoes every committed keystroke back: leave the cursor where the user is typing.
    if (line->text() != text) {
        line->setText(text);
    }
}

void LiveEditDelegate::initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const
{
    QStyledItemDelegate::initStyleOption(option, index);
    // From the view's own palette (not the application's), so a palette set on any ancestor counts.
    if (index.data(PlanEntryListModel::UserIndexRole).toInt() < 0) {
        const QColor muted = mutedTextColor(option->palette);
        option->palette.setColor(QPalette::Text, muted);
        option->palette.setColor(QPalette::WindowText, muted);
    }
}

} // namespace spark
