#include "views/plan/planentryeditor.h"

#include "core/quant/roundingmethod.h"
#include "views/plan/liveeditdelegate.h"
#include "views/plan/plancontroller.h"
#include "views/plan/planentrylistmodel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QStackedWidget>
#include <QTabBar>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace spark {

namespace {

QString viewName(PlanList list)
{
    switch (list.id) {
    case PlanList::Targets:
        return QStringLiteral("targetEntries");
    case PlanList::Schemes:
        return QStringLiteral("schemeEntries");
    case PlanList::Roundings:
        return QStringLiteral("roundingEntries");
    default:
        return QStringLiteral("ignoreEntries");
    }
}

QString viewToolTip(PlanList list)
{
    switch (list.id) {
    case PlanList::Targets:
        return PlanEntryEditor::tr(
            "Entries that select modules for quantization (vLLM `targets`). A module is "
            "quantized when a target selects it and no ignore entry does.");
    case PlanList::Schemes:
        return PlanEntryEditor::tr(
                   "Scheme rules ENTRY=SCHEME (e.g. re:.*\\.fc$=W8A16): the last rule matching "
                   "a module gives its scheme, even for a module the entries keep; BF16 keeps "
                   "it. Schemes: %1.")
            .arg(QString::fromStdString(weightSchemeNames()));
    case PlanList::Roundings:
        return PlanEntryEditor::tr("Rounding rules ENTRY=METHOD (e.g. re:.*down_proj$=mse): the last rule "
                                   "matching a quantized module gives its rounding method instead of the "
                                   "default; modules kept BF16 ignore them. Methods: %1.")
            .arg(QString::fromStdString(roundingMethodNames()));
    default:
        return PlanEntryEditor::tr(
            "Entries that keep modules BF16 (vLLM `ignore`). Ignore wins over targets.");
    }
}

QString addToolTip(PlanList list)
{
    switch (list.id) {
    case PlanList::Targets:
        return PlanEntryEditor::tr(
            "Add a target entry: an exact vLLM module name, a class name (\"Linear\") or re:REGEX");
    case PlanList::Schemes:
        return PlanEntryEditor::tr(
            "Add a scheme rule ENTRY=SCHEME, ENTRY as a target (exact name, Linear, re:REGEX)");
    case PlanList::Roundings:
        return PlanEntryEditor::tr("Add a rounding rule ENTRY=METHOD, ENTRY as a target (exact name, Linear, "
                                   "re:REGEX), METHOD one of %1")
            .arg(QString::fromStdString(roundingMethodNames()));
    default:
        return PlanEntryEditor::tr("Add an ignore entry: an exact vLLM module name or re:REGEX (matched with "
                                   "Python re.match: anchored at the start only)");
    }
}

} // namespace

PlanEntryEditor::PlanEntryEditor(PlanController* controller, PlanList list, QWidget* parent)
    : QWidget(parent), m_controller(controller), m_stack(new QStackedWidget(this))
{
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
    m_title = new QLabel(this);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    // The buttons go under the list, not beside the tabs: beside them they set the Plan tab's left column to
    // 515 pixels and pushed the modules' error column out of view at 1000.
    auto* buttons = new QHBoxLayout;
    buttons->setContentsMargins(0, 0, 0, 0);
    buttons->setSpacing(2);
    buttons->addWidget(m_add);
    buttons->addWidget(m_remove);
    buttons->addWidget(m_up);
    buttons->addWidget(m_down);
    buttons->addStretch(1);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(1);
    layout->addWidget(m_title);
    layout->addWidget(m_stack, 1);
    layout->addLayout(buttons);

    m_pages.push_back(makePage(list));
    m_title->setBuddy(m_pages.front().view);
    m_add->setToolTip(addToolTip(list));

    connect(m_add, &QToolButton::clicked, this, &PlanEntryEditor::addEntry);
    connect(m_remove, &QToolButton::clicked, this, &PlanEntryEditor::removeCurrent);
    connect(m_up, &QToolButton::clicked, this, [this] { moveCurrent(-1); });
    connect(m_down, &QToolButton::clicked, this, [this] { moveCurrent(1); });
    connect(m_controller, &PlanController::editsChanged, this, &PlanEntryEditor::updateTabTexts);
    updateButtons();
}

PlanEntryEditor::Page PlanEntryEditor::makePage(PlanList list)
{
    Page page{list, {}, new PlanEntryListModel(m_controller, list, this), new QTableView(m_stack)};
    QTableView* view = page.view;
    view->setObjectName(viewName(list));
    view->setModel(page.model);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                          QAbstractItemView::AnyKeyPressed);
    view->verticalHeader()->hide();
    // Compact rows (the style's default is half again as tall), with room for an entry's line editor.
    view->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
    view->verticalHeader()->setMinimumSectionSize(fontMetrics().height() + 4);
    view->setWordWrap(false);
    auto* delegate = new LiveEditDelegate(view);
    view->setItemDelegateForColumn(PlanEntryListModel::Entry, delegate);
    connect(delegate, &LiveEditDelegate::editingStarted, page.model, &PlanEntryListModel::beginEditSession);
    // Every column fits the editor's width with no horizontal scrolling: the short ones at their contents,
    // the problem at about ten characters (its full text is the tooltip), and the entry, the text a
    // user types, the rest.
    auto* header = view->horizontalHeader();
    header->setStretchLastSection(false);
    header->setSectionResizeMode(PlanEntryListModel::Entry, QHeaderView::Stretch);
    header->setSectionResizeMode(PlanEntryListModel::Matches, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(PlanEntryListModel::Source, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(PlanEntryListModel::Problem, QHeaderView::Interactive);
    view->setColumnWidth(PlanEntryListModel::Problem, fontMetrics().averageCharWidth() * 10);
    view->setToolTip(viewToolTip(list));
    m_stack->addWidget(view);
    connect(view->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &PlanEntryEditor::updateButtons);
    connect(page.model, &QAbstractItemModel::modelReset, this, &PlanEntryEditor::updateButtons);
    return page;
}

void PlanEntryEditor::setTitle(const QString& title)
{
    m_pages.front().title = title;
    m_title->setText(title);
    updateTabTexts();
}

QString PlanEntryEditor::title() const
{
    return m_pages[m_current].title;
}

void PlanEntryEditor::addList(PlanList list, const QString& title)
{
    if (pageOf(list)) {
        return;
    }
    m_pages.push_back(makePage(list));
    m_pages.back().title = title;
    if (!m_tabs) {
        // The tabs take the title's place on the line, so a second list costs no height.
        m_tabs = new QTabBar(this);
        m_tabs->setObjectName(QStringLiteral("%1Tabs").arg(m_pages.front().view->objectName()));
        m_tabs->setDrawBase(false);
        m_tabs->setExpanding(false);
        m_tabs->setDocumentMode(true);
        // Whole tab names, never scroll arrows: the editor's minimum width keeps room for both.
        m_tabs->setUsesScrollButtons(false);
        m_tabs->setElideMode(Qt::ElideNone);
        m_tabs->addTab(m_pages.front().title);
        // replaceWidget() searches the title line too; the item it hands back is ours to delete.
        delete layout()->replaceWidget(m_title, m_tabs);
        m_title->hide();
        connect(m_tabs, &QTabBar::currentChanged, this, [this](int index) {
            if (index >= 0 && index < static_cast<int>(m_pages.size())) {
                setCurrentList(m_pages[static_cast<std::size_t>(index)].list);
            }
        });
    }
    m_tabs->addTab(title);
    // Tab reaches the tabs first, then the buttons and the tables, as the editor reads (the tabs were made
    // last).
    QWidget* previous = m_tabs;
    for (QWidget* next : std::initializer_list<QWidget*>{m_add, m_remove, m_up, m_down}) {
        setTabOrder(previous, next);
        previous = next;
    }
    for (const auto& page : m_pages) {
        setTabOrder(previous, page.view);
        previous = page.view;
    }
    updateTabTexts();
}

void PlanEntryEditor::setCurrentList(PlanList list)
{
    for (std::size_t i = 0; i < m_pages.size(); ++i) {
        if (m_pages[i].list == list) {
            m_current = static_cast<int>(i);
            m_stack->setCurrentWidget(m_pages[i].view);
            if (m_tabs) {
                m_tabs->setCurrentIndex(m_current);
            }
            m_add->setToolTip(addToolTip(list));
            updateButtons();
            return;
        }
    }
}

const PlanEntryEditor::Page* PlanEntryEditor::pageOf(PlanList list) const
{
    for (const auto& page : m_pages) {
        if (page.list == list) {
            return &page;
        }
    }
    return nullptr;
}

PlanEntryListModel* PlanEntryEditor::model(PlanList list) const
{
    const Page* page = pageOf(list);
    return page ? page->model : nullptr;
}

QTableView* PlanEntryEditor::view(PlanList list) const
{
    const Page* page = pageOf(list);
    return page ? page->view : nullptr;
}

void PlanEntryEditor::updateTabTexts()
{
    if (!m_tabs) {
        return;
    }
    for (std::size_t i = 0; i < m_pages.size(); ++i) {
        const auto count = m_controller->userEntries(m_pages[i].list).size();
        const QString& title = m_pages[i].title;
        m_tabs->setTabText(static_cast<int>(i), count > 0 ? tr("%1 (%2)").arg(title).arg(count) : title);
    }
}

int PlanEntryEditor::currentUserIndex() const
{
    const QModelIndex current = view()->currentIndex();
    return current.isValid() ? current.data(PlanEntryListModel::UserIndexRole).toInt() : -1;
}

void PlanEntryEditor::updateButtons()
{
    const int user = currentUserIndex();
    const int count = static_cast<int>(m_controller->userEntries(currentList()).size());
    m_remove->setEnabled(user >= 0);
    m_up->setEnabled(user > 0);
    m_down->setEnabled(user >= 0 && user + 1 < count);
}

void PlanEntryEditor::addEntry()
{
    // Empty matches nothing (a half-typed regex such as "re:.*" would select everything meanwhile).
    const int index = m_controller->addEntry(currentList(), QString());
    const QModelIndex cell = model()->index(model()->rowOfUserEntry(index), PlanEntryListModel::Entry);
    view()->setCurrentIndex(cell);
    // The new row is the last one: bring it into view, or the entry would be typed blind.
    view()->scrollTo(cell);
    view()->edit(cell);
}

void PlanEntryEditor::removeCurrent()
{
    const int user = currentUserIndex();
    if (user >= 0) {
        m_controller->removeEntry(currentList(), user);
    }
}

void PlanEntryEditor::moveCurrent(int delta)
{
    const int user = currentUserIndex();
    if (user >= 0 && m_controller->moveEntry(currentList(), user, delta)) {
        view()->setCurrentIndex(
            model()->index(model()->rowOfUserEntry(user + delta), PlanEntryListModel::Entry));
    }
}

} // namespace spark
