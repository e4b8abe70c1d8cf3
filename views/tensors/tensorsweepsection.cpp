#include "views/tensors/tensorsweepsection.h"

#include "core/plan/sensitivitysweep.h"
#include "views/shared/formatting.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>

namespace spark {

TensorSweepSection::TensorSweepSection(QWidget* parent)
    : QWidget(parent), m_unit(new QLabel(this)), m_table(new QTableWidget(0, 4, this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_unit->setWordWrap(true);
    m_unit->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_table->setHorizontalHeaderLabels({tr("Scheme"), tr("Rel. error"), tr("Bytes"), tr("Streamed")});
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setMinimumHeight(fontMetrics().height() * 8);
    layout->addWidget(m_unit);
    layout->addWidget(m_table);
    update();
}

void TensorSweepSection::setSweep(std::shared_ptr<const SweepResult> sweep)
{
    m_sweep = std::move(sweep);
    update();
}

void TensorSweepSection::setTensor(const QString& tensor)
{
    m_tensor = tensor;
    update();
}

QString TensorSweepSection::unitText() const
{
    return m_unit->text();
}

void TensorSweepSection::update()
{
    m_table->setRowCount(0);
    if (!m_sweep) {
        m_unit->setText(tr("Run a sweep (Budget tab) to compare every scheme on this tensor's unit."));
        return;
    }
    const std::string tensor = m_tensor.toStdString();
    const auto it = std::find_if(m_sweep->units.begin(), m_sweep->units.end(), [&](const SweepUnit& u) {
        return std::find(u.weights.begin(), u.weights.end(), tensor) != u.weights.end();
    });
    if (it == m_sweep->units.end()) {
        m_unit->setText(tr("Not the weight of a Linear decision unit."));
        return;
    }
    QString text = tr("Unit %1 (%n module(s))", nullptr, static_cast<int>(it->modules.size()))
                       .arg(QString::fromStdString(it->name));
    if (it->fixed()) {
        text += QLatin1Char('\n') + QString::fromStdString(it->fixedReason);
    }
    m_unit->setText(text);
    for (const auto& c : it->candidates) {
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        auto* scheme = new QTableWidgetItem(schemeText(*c.scheme));
        if (c.scheme == it->baseScheme) {
            // The scheme of the plan the sweep started from.
            auto font = scheme->font();
            font.setBold(true);
            scheme->setFont(font);
        }
        m_table->setItem(row, 0, scheme);
        m_table->setItem(row, 1, new QTableWidgetItem(formatRelError(c.relErr)));
        m_table->setItem(row, 2, new QTableWidgetItem(localizedBytes(c.bytes)));
        m_table->setItem(row, 3, new QTableWidgetItem(localizedBytes(c.streamedBytes)));
    }
}

} // namespace spark
