#include "views/tensors/schemedelegate.h"

#include "core/quant/weightscheme.h"
#include "views/shared/formatting.h"
#include "views/shared/schemecolors.h"

#include <QComboBox>

namespace spark {

QWidget* SchemeDelegate::createEditor(QWidget* parent, const QStyleOptionViewItem& /*option*/,
                                      const QModelIndex& /*index*/) const
{
    auto* box = new QComboBox(parent);
    box->setObjectName(QStringLiteral("schemeChooser"));
    for (const auto& s : weightSchemes()) {
        if (!s.product) {
            continue;
        }
        const QString name = schemeText(s);
        box->addItem(s.quantizes() ? name : tr("keep (BF16)"), name);
        box->setItemData(box->count() - 1,
                         QString::fromLatin1(s.summary.data(), static_cast<qsizetype>(s.summary.size())),
                         Qt::ToolTipRole);
        if (const QColor color = schemeColor(name); color.isValid()) {
            box->setItemData(box->count() - 1, color, Qt::DecorationRole);
        }
    }
    // Commit as soon as a scheme is picked: one click applies it, like the checkbox does.
    connect(box, &QComboBox::activated, this, [this, box] {
        Q_EMIT const_cast<SchemeDelegate*>(this)->commitData(box);
        Q_EMIT const_cast<SchemeDelegate*>(this)->closeEditor(box);
    });
    return box;
}

void SchemeDelegate::setEditorData(QWidget* editor, const QModelIndex& index) const
{
    auto* box = static_cast<QComboBox*>(editor);
    const QString decision = index.data(Qt::DisplayRole).toString();
    const int at = box->findData(decision == QStringLiteral("keep") ? QStringLiteral("BF16") : decision);
    box->setCurrentIndex(std::max(0, at));
}

void SchemeDelegate::setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const
{
    model->setData(index, static_cast<QComboBox*>(editor)->currentData(), Qt::EditRole);
}

} // namespace spark
