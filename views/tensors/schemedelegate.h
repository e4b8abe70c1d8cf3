#pragma once

#include <QStyledItemDelegate>

namespace spark {

/// @brief Edits the Decision column with a scheme chooser: keep (BF16) or any quantizing scheme. The
/// choice goes to the model as Qt::EditRole text (the scheme's name, "BF16" to keep); the model only asks
/// the plan, which decides (fused partners follow).
class SchemeDelegate : public QStyledItemDelegate
{
    Q_OBJECT

  public:
    using QStyledItemDelegate::QStyledItemDelegate;

    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option,
                          const QModelIndex& index) const override;
    void setEditorData(QWidget* editor, const QModelIndex& index) const override;
    void setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const override;
};

} // namespace spark
