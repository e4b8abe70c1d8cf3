#include "views/tensors/tensordetailpanel.h"

#include "views/document/documentsnapshot.h"
#include "views/shared/formatting.h"

#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLocale>
#include <QVBoxLayout>

namespace spark {

TensorDetailPanel::TensorDetailPanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    m_hint = new QLabel(tr("Select a tensor to see its details."), this);
    m_hint->setWordWrap(true);
    m_hint->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_hint->setForegroundRole(QPalette::PlaceholderText);
    layout->addWidget(m_hint);

    auto* box = new QGroupBox(tr("Tensor"), this);
    m_metadata = box;
    m_form = new QFormLayout(box);
    m_form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_form->setRowWrapPolicy(QFormLayout::DontWrapRows);
    const QStringList labels{tr("Name"),  tr("Module"),       tr("Group"),        tr("Role"),
                             tr("File"),  tr("Data offsets"), tr("File offsets"), tr("DType"),
                             tr("Shape"), tr("Params"),       tr("Bytes"),        tr("Share")};
    for (const auto& label : labels) {
        addField(label);
    }
    layout->addWidget(box);

    m_sections = new QVBoxLayout;
    layout->addLayout(m_sections);
    layout->addStretch(1);
    // Wide enough for "layers.12.self_attn.q_proj.weight" without fixing a pixel size.
    setMinimumWidth(fontMetrics().averageCharWidth() * 44);
    clear();
}

QLabel* TensorDetailPanel::addField(const QString& label)
{
    auto* value = new QLabel(m_metadata);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    value->setWordWrap(true);
    m_form->addRow(label, value);
    m_fields.append({label, value});
    return value;
}

QString TensorDetailPanel::fieldText(const QString& label) const
{
    for (const auto& [name, value] : m_fields) {
        if (name == label) {
            return value->text();
        }
    }
    return {};
}

void TensorDetailPanel::showTensor(const DocumentSnapshot& snapshot, int row)
{
    if (row < 0 || static_cast<std::size_t>(row) >= snapshot.rows.size()) {
        clear();
        return;
    }
    const auto& tensor = snapshot.rows[static_cast<std::size_t>(row)];
    const QLocale locale;
    auto range = [&locale](std::uint64_t begin, std::uint64_t end) {
        return tr("%1 – %2").arg(locale.toString(static_cast<qulonglong>(begin)),
                                 locale.toString(static_cast<qulonglong>(end)));
    };
    const QStringList values{
        tensor.name,
        tensor.module,
        tensor.group,
        roleText(tensor.role),
        tensor.file,
        range(tensor.begin, tensor.end),
        range(tensor.dataStart + tensor.begin, tensor.dataStart + tensor.end),
        tensor.dtype,
        tensor.shapeText,
        formatCount(tensor.params),
        tr("%1 (%2 B)").arg(localizedBytes(tensor.bytes), formatCount(tensor.bytes)),
        formatShare(tensor.share),
    };
    for (qsizetype i = 0; i < m_fields.size() && i < values.size(); ++i) {
        m_fields[i].second->setText(values[i]);
    }
    m_fields[0].second->setToolTip(tensor.name);
    m_fields[5].second->setToolTip(tr("Byte range inside the data section that follows the JSON header."));
    m_fields[6].second->setToolTip(tr("Byte range from the start of %1.").arg(tensor.file));
    m_tensorName = tensor.name;
    m_hint->hide();
    m_metadata->show();
}

void TensorDetailPanel::clear()
{
    m_tensorName.clear();
    for (const auto& field : std::as_const(m_fields)) {
        field.second->clear();
    }
    m_metadata->hide();
    m_hint->show();
}

void TensorDetailPanel::addSection(const QString& title, QWidget* content)
{
    auto* box = new QGroupBox(title, this);
    auto* layout = new QVBoxLayout(box);
    layout->addWidget(content);
    m_sections->addWidget(box);
}

} // namespace spark
