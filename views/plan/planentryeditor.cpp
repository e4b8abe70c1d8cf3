#include "views/plan/planentryeditor.h"

#include "views/plan/liveeditdelegate.h"
#include "views/plan/plancontroller.h"
#include "views/plan/planentrylistmodel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace spark {

PlanEntryEditor::PlanEntryEditor(PlanController* controller, EntryKind kind, QWidget* parent)
    : QWidget(parent), m_controller(controller), m_kind(kind),
      m_model(new PlanEntryListModel(controller, kind, this))
{
    m_view = new QTableView(this);
    m_view->setObjectName(kind == EntryKind::Target   ? QStringLiteral("targetEntries")
                          : kind == EntryKind::Scheme ? QStringLiteral("schemeEntries")
                                                      : QStringLiteral("ignoreEntries"));
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                            QAbstractItemView::AnyKeyPressed);
    m_view->verticalHeader()->hide();
    // Compact rows (the style's default is half again as tall), with room for an entry's line editor.
    m_view->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
    m_view->verticalHeader()->setMinimumSectionSize(fontMetrics().height() + 4);
    m_view->setWordWrap(false);
    auto* delegate = new LiveEditDelegate(m_view);
    m_view->setItemDelegateForColumn(PlanEntryListModel::Entry, delegate);
    connect(delegate, &LiveEditDelegate::editingStarted, m_model, &PlanEntryListModel::beginEditSession);
    // The editors sit in a narrow column: every column fits its width with no horizontal scrolling, the
    // short ones at their contents, entry and problem sharing the rest (both have the full text as tooltip).
    auto* header = m_view->horizontalHeader();
    header->setSectionResizeMode(PlanEntryListModel::Entry, QHeaderView::Stretch);
    header->setSectionResizeMode(PlanEntryListModel::Matches, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(PlanEntryListModel::Source, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(PlanEntryListModel::Problem, QHeaderView::Stretch);
    switch (kind) {
    case EntryKind::Target:
        m_view->setToolTip(tr("Entries that select modules for quantization (vLLM `targets`). A module is "
                              "quantized when a target selects it and no ignore entry does."));
        break;
    case EntryKind::Scheme:
        m_view->setToolTip(tr("Scheme rules ENTRY=SCHEME (e.g. re:.*\\.fc$=W8A16): the last rule matching a "
                              "module gives its scheme, even for a module the entries keep; BF16 keeps it. "
                              "Schemes: %1.")
                               .arg(QString::fromStdString(weightSchemeNames())));
        break;
    default:
        m_view->setToolTip(tr("Entries that keep modules BF16 (vLLM `ignore`). Ignore wins over targets."));
        break;
    }

    const auto button = [this](const char* icon, const QString& text) {
        auto* b = new QToolButton(this);
        b->setIcon(QIcon::fromTheme(QString::fromLatin1(icon)));
        b->setText(text);
        b->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
        b->setAutoRaise(true);
        return b;
    };
    m_add = button("list-add", tr("Add"));
    m_remove = button("list-remove", tr("Remove"));
    m_up = button("go-up", tr("Up"));
    m_down = button("go-down", tr("Down"));
    m_add->setToolTip(
        kind == EntryKind::Target
            ? tr("Add a target entry: an exact vLLM module name, a class name (\"Linear\") or re:REGEX")
        : kind == EntryKind::Scheme
            ? tr("Add a scheme rule ENTRY=SCHEME, ENTRY as a target (exact name, Linear, re:REGEX)")
            : tr("Add an ignore entry: an exact vLLM module name or re:REGEX (matched with Python "
                 "re.match: anchored at the start only)"));
    m_title = new QLabel(this);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_title->setBuddy(m_view);
    auto* titleLine = new QHBoxLayout;
    titleLine->setContentsMargins(0, 0, 0, 0);
    titleLine->setSpacing(2);
    titleLine->addWidget(m_title);
    titleLine->addStretch(1);
    titleLine->addWidget(m_add);
    titleLine->addWidget(m_remove);
    titleLine->addWidget(m_up);
    titleLine->addWidget(m_down);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(1);
    layout->addLayout(titleLine);
    layout->addWidget(m_view, 1);

    connect(m_add, &QToolButton::clicked, this, &PlanEntryEditor::addEntry);
    connect(m_remove, &QToolButton::clicked, this, &PlanEntryEditor::removeCurrent);
    connect(m_up, &QToolButton::clicked, this, [this] { moveCurrent(-1); });
    connect(m_down, &QToolButton::clicked, this, [this] { moveCurrent(1); });
    connect(m_view->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &PlanEntryEditor::updateButtons);
    connect(m_model, &QAbstractItemModel::modelReset, this, &PlanEntryEditor::updateButtons);
    updateButtons();
}

void PlanEntryEditor::setTitle(const QString& title)
{
    m_title->setText(title);
}

QString PlanEntryEditor::title() const
{
    return m_title->text();
}

int PlanEntryEditor::currentUserIndex() const
{
    const QModelIndex current = m_view->currentIndex();
    return current.isValid() ? current.data(PlanEntryListModel::UserIndexRole).toInt() : -1;
}

void PlanEntryEditor::updateButtons()
{
    const int user = currentUserIndex();
    const int count = static_cast<int>(m_controller->userEntries(m_kind).size());
    m_remove->setEnabled(user >= 0);
    m_up->setEnabled(user > 0);
    m_down->setEnabled(user >= 0 && user + 1 < count);
}

void PlanEntryEditor::addEntry()
{
    // Empty matches nothing (a half-typed regex such as "re:.*" would select everything meanwhile).
    const int index = m_controller->addEntry(m_kind, QString());
    const QModelIndex cell = m_model->index(m_model->rowOfUserEntry(index), PlanEntryListModel::Entry);
    m_view->setCurrentIndex(cell);
    m_view->edit(cell);
}

void PlanEntryEditor::removeCurrent()
{
    const int user = currentUserIndex();
    if (user >= 0) {
        m_controller->removeEntry(m_kind, user);
    }
}

void PlanEntryEditor::moveCurrent(int delta)
{
    const int user = currentUserIndex();
    if (user >= 0 && m_controller->moveEntry(m_kind, user, delta)) {
        m_view->setCurrentIndex(
            m_model->index(m_model->rowOfUserEntry(user + delta), PlanEntryListModel::Entry));
    }
}

} // namespace spark
