#include "views/tensors/tensordetailpanel.h"

#include "views/document/documentsnapshot.h"
#include "views/shared/formatting.h"

#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLocale>
#include <QSet>
#include <QVBoxLayout>

namespace spark {

TensorDetailPanel::TensorDetailPanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    // With nothing selected the hint is the only visible item and fills the panel: centred both ways.
    m_hint = new QLabel(tr("Select a tensor to see its details."), this);
    m_hint->setObjectName(QStringLiteral("detailHint"));
    m_hint->setWordWrap(true);
    m_hint->setAlignment(Qt::AlignCenter);
    m_hint->setForegroundRole(QPalette::PlaceholderText);
    layout->addWidget(m_hint, 1);

    m_content = new QWidget(this);
    auto* content = new QVBoxLayout(m_content);
    content->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_content, 1);

    m_metadata = new QGroupBox(tr("Tensor"), m_content);
    m_form = new QFormLayout(m_metadata);
    m_form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_form->setRowWrapPolicy(QFormLayout::DontWrapRows);
    const QStringList labels{tr("Name"),  tr("Module"),       tr("Group"),        tr("Role"),
                             tr("File"),  tr("Data offsets"), tr("File offsets"), tr("DType"),
                             tr("Shape"), tr("Params"),       tr("Bytes"),        tr("Share")};
    for (const auto& label : labels) {
        addField(label);
    }
    content->addWidget(m_metadata);

    m_summary = new QGroupBox(tr("Module"), m_content);
    m_summary->setObjectName(QStringLiteral("detailSummary"));
    m_summaryForm = new QFormLayout(m_summary);
    m_summaryForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_summaryForm->setRowWrapPolicy(QFormLayout::DontWrapRows);
    content->addWidget(m_summary);

    m_sections = new QVBoxLayout;
    content->addLayout(m_sections);
    content->addStretch(1);
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
    const auto& fields = m_summary->isVisibleTo(this) ? m_summaryFields : m_fields;
    for (const auto& [name, value] : fields) {
        if (name == label) {
            return value->text();
        }
    }
    return {};
}

QString TensorDetailPanel::hintText() const
{
    return m_hint->isVisibleTo(this) ? m_hint->text() : QString();
}

void TensorDetailPanel::showContent(bool content)
{
    m_hint->setVisible(!content);
    m_content->setVisible(content);
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
    m_selection = {TensorSelection::Tensor, tensor.name, tensor.name};
    m_summary->hide();
    m_metadata->show();
    showContent(true);
}

void TensorDetailPanel::showSelection(const DocumentSnapshot& snapshot, const TensorSelection& selection)
{
    if (selection.kind == TensorSelection::None) {
        clear();
        return;
    }
    if (selection.kind == TensorSelection::Tensor) {
        showTensor(snapshot, snapshot.rowOf(selection.name));
        return;
    }
    // A module or a layer: the sums of its tensors and what they are.
    const bool isModule = selection.kind == TensorSelection::Module;
    std::vector<const TensorRow*> tensors;
    for (const auto& row : snapshot.rows) {
        if (isModule ? row.module == selection.name : row.group == selection.name) {
            tensors.push_back(&row);
        }
    }
    if (tensors.empty()) {
        clear();
        return;
    }
    std::uint64_t params = 0;
    std::uint64_t bytes = 0;
    double share = 0.0;
    QSet<QString> dtypes;
    QSet<QString> modules;
    QStringList lines;
    for (const auto* row : tensors) {
        params += row->params;
        bytes += row->bytes;
        share += row->share;
        dtypes.insert(row->dtype);
        modules.insert(row->module);
        if (isModule) {
            // "weight  [256, 512]  BF16": the name under the module, shape and dtype.
            lines.append(
                tr("%1  %2  %3").arg(row->name.mid(selection.name.size() + 1), row->shapeText, row->dtype));
        }
    }
    QList<QPair<QString, QString>> values{{tr("Name"), selection.name}};
    if (isModule) {
        values.append({tr("Group"), tensors.front()->group});
        values.append({tr("Role"), roleText(tensors.front()->role)});
        values.append({tr("Tensors"), lines.join(QLatin1Char('\n'))});
    } else {
        values.append({tr("Modules"), formatCount(static_cast<std::uint64_t>(modules.size()))});
        values.append({tr("Tensors"), formatCount(tensors.size())});
    }
    values.append({tr("DType"), dtypes.size() == 1 ? *dtypes.cbegin() : tr("mixed")});
    values.append({tr("Params"), formatCount(params)});
    values.append({tr("Bytes"), tr("%1 (%2 B)").arg(localizedBytes(bytes), formatCount(bytes))});
    values.append({tr("Share"), formatShare(share)});

    while (m_summaryForm->rowCount() > 0) {
        m_summaryForm->removeRow(0);
    }
    m_summaryFields.clear();
    for (const auto& [label, text] : values) {
        auto* value = new QLabel(text, m_summary);
        value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        value->setWordWrap(true);
        m_summaryForm->addRow(label, value);
        m_summaryFields.append({label, value});
    }
    m_summary->setTitle(isModule ? tr("Module") : tr("Layer"));
    m_tensorName.clear();
    m_selection = selection;
    m_metadata->hide();
    m_summary->show();
    showContent(true);
}

void TensorDetailPanel::clear()
{
    m_tensorName.clear();
    m_selection = {};
    for (const auto& field : std::as_const(m_fields)) {
        field.second->clear();
    }
    showContent(false);
}

void TensorDetailPanel::addSection(const QString& title, QWidget* content)
{
    auto* box = new QGroupBox(title, m_content);
    auto* layout = new QVBoxLayout(box);
    layout->addWidget(content);
    m_sections->addWidget(box);
}

} // namespace spark
