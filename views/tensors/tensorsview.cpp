#include "views/tensors/tensorsview.h"

#include "core/plan/sensitivitysweep.h"
#include "views/document/document.h"
#include "views/shared/schemecolors.h"
#include "views/tensors/plannederrors.h"
#include "views/tensors/schemedelegate.h"
#include "views/tensors/tensorcolumns.h"
#include "views/tensors/tensordetailpanel.h"
#include "views/tensors/tensorfilterproxymodel.h"
#include "views/tensors/tensortablemodel.h"
#include "views/tensors/tensortreemodel.h"

#include <QCheckBox>
#include <QDataStream>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIODevice>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSplitter>
#include <QStyle>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>

namespace spark {

namespace {

constexpr quint32 kStateMagic = 0x53505456; // "SPTV"
constexpr quint32 kStateVersion = 2;        // 2: analysis columns moved next to Name

// Opens QTreeView's width of a column's rows (without the header) to fitColumns().
class TensorTreeView : public QTreeView
{
  public:
    using QTreeView::QTreeView;
    using QTreeView::sizeHintForColumn;
};

} // namespace

TensorsView::TensorsView(Document* document, QWidget* parent)
    : QWidget(parent), m_document(document), m_flat(new TensorTableModel(this)),
      m_tree(new TensorTreeModel(this)), m_proxy(new TensorFilterProxyModel(this))
{
    for (TensorItemModel* model : models()) {
        connect(model, &TensorItemModel::decisionToggleRequested, this,
                &TensorsView::decisionToggleRequested);
        connect(model, &TensorItemModel::schemeChangeRequested, this, &TensorsView::schemeChangeRequested);
    }
    m_filter = new QLineEdit(this);
    m_filter->setObjectName(QStringLiteral("tensorFilter"));
    m_filter->setPlaceholderText(tr("Filter tensors by name (Ctrl+F)"));
    m_filter->setClearButtonEnabled(true);
    m_filter->setToolTip(tr("Shows tensors whose name contains the text (ignoring case), or, with Regex on, "
                            "where the regular expression matches anywhere in the name."));
    m_regex = new QCheckBox(tr("Rege&x"), this);
    m_regex->setToolTip(tr("Treat the filter as a regular expression (Perl syntax, case-sensitive)."));
    m_grouped = new QCheckBox(tr("&Group by layer"), this);
    m_grouped->setChecked(true);
    m_grouped->setToolTip(tr("Nest tensors under their layer and module, or list them flat."));
    m_count = new QLabel(this);
    m_filterError = new QLabel(this);
    m_filterError->setObjectName(QStringLiteral("filterError"));
    m_filterError->setWordWrap(true);
    m_filterError->hide();

    auto* bar = new QHBoxLayout;
    bar->addWidget(m_filter, 1);
    bar->addWidget(m_regex);
    bar->addWidget(m_grouped);
    bar->addWidget(m_count);
    m_legend = new QLabel(this);
    m_legend->setObjectName(QStringLiteral("schemeLegend"));
    m_legend->setToolTip(
        tr("Decision colours: the plan's scheme of each module. Double-click a Decision cell "
           "to choose another scheme."));
    bar->addWidget(m_legend);

    m_view = new TensorTreeView(this);
    m_view->setObjectName(QStringLiteral("tensorView"));
    m_proxy->setSourceModel(m_tree);
    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(TensorColumns::Name, Qt::AscendingOrder);
    m_view->setUniformRowHeights(true);
    m_view->setAlternatingRowColors(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->header()->setSectionsMovable(true);
    // Name takes the spare width (fitNameColumn) instead of the last column; long names lose their
    // middle, where a layer's modules differ least from each other's ("layers.0.…down_proj.weight").
    m_view->header()->setStretchLastSection(false);
    m_view->setTextElideMode(Qt::ElideMiddle);
    m_view->viewport()->installEventFilter(this);
    // What the plan does with a tensor and what it costs come right after its name, so they stay in view in
    // a narrow window; the header facts follow, and the max error (in weight units, not comparable across
    // tensors) goes last: what has no room scrolls sideways.
    QHeaderView* header = m_view->header();
    header->moveSection(header->visualIndex(TensorColumns::Decision), 1);
    header->moveSection(header->visualIndex(TensorColumns::RelError), 2);
    header->moveSection(header->visualIndex(TensorColumns::MaxError), TensorColumns::Count - 1);
    m_view->setItemDelegateForColumn(TensorColumns::Decision, new SchemeDelegate(m_view));

    m_detail = new TensorDetailPanel(this);
    auto* detailScroll = new QScrollArea(this);
    detailScroll->setWidget(m_detail);
    detailScroll->setWidgetResizable(true);
    detailScroll->setFrameShape(QFrame::NoFrame);
    // The panel wraps instead of scrolling sideways, so the scroll area must be at least as wide as it.
    detailScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    detailScroll->setMinimumWidth(m_detail->minimumWidth() +
                                  style()->pixelMetric(QStyle::PM_ScrollBarExtent) * 2);

    m_splitter = new QSplitter(Qt::Horizontal, this);
    m_splitter->setObjectName(QStringLiteral("tensorsSplitter"));
    m_splitter->addWidget(m_view);
    m_splitter->addWidget(detailScroll);
    m_splitter->setStretchFactor(0, 3);
    m_splitter->setStretchFactor(1, 1);
    m_splitter->setChildrenCollapsible(false);
    // Initial proportions in text units (the splitter rescales them to the real width).
    const int charWidth = fontMetrics().averageCharWidth();
    m_splitter->setSizes({charWidth * 130, charWidth * 46});

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_filterError);
    layout->addWidget(m_splitter, 1);

    // The sort arrow moves to another column: make room for it there (other widths stay as they are).
    connect(m_view->header(), &QHeaderView::sortIndicatorChanged, this, [this](int column) {
        if (m_document->snapshot() && column != TensorColumns::Name &&
            m_view->columnWidth(column) < fittedWidth(column)) {
            m_view->setColumnWidth(column, fittedWidth(column));
            fitNameColumn();
        }
    });
    connect(m_filter, &QLineEdit::textChanged, this, &TensorsView::applyFilter);
    connect(m_regex, &QCheckBox::toggled, this, &TensorsView::applyFilter);
    connect(m_grouped, &QCheckBox::toggled, this, &TensorsView::setGrouped);
    connect(m_document, &Document::snapshotChanged, this, &TensorsView::onSnapshotChanged);
    connect(m_document, &Document::analysisChanged, this, &TensorsView::refreshShownAnalysis);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) { onCurrentChanged(current); });
    // Rows the proxy adds or drops (filtering, a new document) change the count.
    connect(m_proxy, &QAbstractItemModel::modelReset, this, &TensorsView::updateCount);
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, &TensorsView::updateCount);
    connect(m_proxy, &QAbstractItemModel::rowsRemoved, this, &TensorsView::updateCount);
    connect(m_proxy, &QAbstractItemModel::layoutChanged, this, &TensorsView::updateCount);
    onSnapshotChanged();
}

std::array<TensorItemModel*, 2> TensorsView::models() const
{
    return {m_flat, m_tree};
}

bool TensorsView::isGrouped() const
{
    return m_proxy->sourceModel() == m_tree;
}

QString TensorsView::currentTensor() const
{
    return m_currentTensor;
}

QString TensorsView::filterError() const
{
    return m_filterError->isHidden() ? QString() : m_filterError->text();
}

void TensorsView::setAnalysisScheme(const WeightScheme* scheme)
{
    if (scheme != m_analysisScheme) {
        m_analysisScheme = scheme;
        refreshShownAnalysis({});
    }
}

void TensorsView::setSweep(std::shared_ptr<const SweepResult> sweep)
{
    m_sweep = std::move(sweep);
    refreshShownAnalysis({});
}

void TensorsView::refreshShownAnalysis(const QList<int>& rows)
{
    auto shown =
        plannedErrors(m_document->snapshot().get(), m_document->analysis(), m_analysisScheme, m_sweep.get());
    QList<int> changed = changedErrorRows(m_shown.get(), shown.get());
    changed.append(rows);
    std::sort(changed.begin(), changed.end());
    changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
    m_shown = std::move(shown);
    for (TensorItemModel* model : models()) {
        model->updateAnalysis(m_shown, changed);
    }
}

void TensorsView::onSnapshotChanged()
{
    const QString previous = m_currentTensor;
    m_shown =
        plannedErrors(m_document->snapshot().get(), m_document->analysis(), m_analysisScheme, m_sweep.get());
    for (TensorItemModel* model : models()) {
        model->resetData(m_document->snapshot(), m_shown);
    }
    expandDefault();
    // Every open fits the columns to the new draft's names and sizes.
    if (m_document->snapshot()) {
        fitColumns();
    }
    // Keep looking at the same tensor when a checkpoint is reopened (or a similar one opened); the sections
    // hear of it even when the name is the same, since it is another draft's tensor.
    if (previous.isEmpty() || !selectTensor(previous)) {
        onCurrentChanged(QModelIndex(), true);
    } else {
        onCurrentChanged(m_view->currentIndex(), true);
    }
    updateCount();
}

int TensorsView::fittedWidth(int column) const
{
    const QFontMetrics metrics = m_view->fontMetrics();
    const QHeaderView* header = m_view->header();
    // The rows laid out so far and the title; room for the sort arrow only where it shows (QHeaderView's own
    // size hint keeps it free in every column, which costs a narrow window a whole column).
    int width = std::max(static_cast<TensorTreeView*>(m_view)->sizeHintForColumn(column),
                         metrics.horizontalAdvance(TensorColumns::title(column)) +
                             style()->pixelMetric(QStyle::PM_HeaderMargin) * 3);
    if (column == header->sortIndicatorSection()) {
        width += header->sizeHint().height();
    }
    if (column == TensorColumns::Decision) {
        // Decisions arrive after this (from the plan): a checkbox and the longest scheme name.
        width = std::max(width, metrics.horizontalAdvance(QStringLiteral("W4A16_ASYM")) +
                                    style()->pixelMetric(QStyle::PM_IndicatorWidth) +
                                    metrics.averageCharWidth() * 3);
    } else if (column == TensorColumns::RelError || column == TensorColumns::MaxError) {
        // So are the errors: room for "12.3 %" and "0.0547".
        width = std::max(width, metrics.horizontalAdvance(QStringLiteral("00.00 %")) +
                                    metrics.averageCharWidth() * 2);
    }
    return width;
}

void TensorsView::fitColumns()
{
    for (int column = 0; column < TensorColumns::Count; ++column) {
        if (column != TensorColumns::Name) {
            m_view->setColumnWidth(column, fittedWidth(column));
        }
    }
    fitNameColumn();
}

void TensorsView::fitNameColumn()
{
    int others = 0;
    for (int column = 0; column < TensorColumns::Count; ++column) {
        if (column != TensorColumns::Name && !m_view->header()->isSectionHidden(column)) {
            others += m_view->columnWidth(column);
        }
    }
    // Never narrower than a module name under its layer: below that the table scrolls sideways instead.
    const int minimum = m_view->fontMetrics().averageCharWidth() * 24;
    m_view->setColumnWidth(TensorColumns::Name, std::max(minimum, m_view->viewport()->width() - others));
}

bool TensorsView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_view->viewport() && event->type() == QEvent::Resize) {
        fitNameColumn();
    }
    return QWidget::eventFilter(watched, event);
}

void TensorsView::expandDefault()
{
    if (!isGrouped()) {
        return;
    }
    // A filter is a search: show every hit. Unfiltered, groups open onto their modules.
    if (m_proxy->filterText().isEmpty()) {
        m_view->expandToDepth(0);
    } else {
        m_view->expandAll();
    }
}

void TensorsView::setGrouped(bool grouped)
{
    if (grouped == isGrouped()) {
        return;
    }
    const QString current = m_currentTensor;
    m_proxy->setSourceModel(grouped ? static_cast<TensorItemModel*>(m_tree) : m_flat);
    m_view->setRootIsDecorated(grouped);
    {
        const QSignalBlocker blocker(m_grouped);
        m_grouped->setChecked(grouped);
    }
    expandDefault();
    if (current.isEmpty() || !selectTensor(current)) {
        onCurrentChanged(QModelIndex());
    }
    updateCount();
    fitColumns();
    Q_EMIT groupedChanged(grouped);
}

void TensorsView::focusFilter()
{
    m_filter->setFocus(Qt::ShortcutFocusReason);
    m_filter->selectAll();
}

bool TensorsView::setFilter(const QString& text, bool isRegex)
{
    {
        const QSignalBlocker blockText(m_filter);
        const QSignalBlocker blockRegex(m_regex);
        m_filter->setText(text);
        m_regex->setChecked(isRegex);
    }
    applyFilter();
    return m_filterError->isHidden();
}

void TensorsView::applyFilter()
{
    const bool ok = m_proxy->setFilter(m_filter->text(), m_regex->isChecked());
    if (ok) {
        m_filterError->hide();
        m_filterError->clear();
        expandDefault();
    } else {
        m_filterError->setText(tr("Invalid regular expression: %1. The previous filter stays in force.")
                                   .arg(m_proxy->filterError()));
        // Red that stays readable on light and dark palettes alike.
        QPalette palette = m_filterError->palette();
        const bool dark = palette.color(QPalette::Window).lightness() < 128;
        palette.setColor(QPalette::WindowText, dark ? QColor(255, 128, 128) : QColor(176, 0, 32));
        m_filterError->setPalette(palette);
        m_filterError->show();
    }
    updateCount();
}

void TensorsView::updateCount()
{
    const auto snapshot = m_document->snapshot();
    const int total = snapshot ? static_cast<int>(snapshot->rows.size()) : 0;
    const int shown = m_proxy->acceptedTensorCount();
    m_count->setText(shown == total ? tr("%n tensor(s)", nullptr, total)
                                    : tr("%1 of %n tensor(s)", nullptr, total).arg(shown));
}

bool TensorsView::selectTensor(const QString& name)
{
    const QModelIndex source =
        static_cast<const TensorItemModel*>(m_proxy->sourceModel())->indexOfTensor(name);
    if (!source.isValid()) {
        return false;
    }
    QModelIndex index = m_proxy->mapFromSource(source);
    if (!index.isValid()) {
        setFilter(QString(), m_regex->isChecked());
        index = m_proxy->mapFromSource(source);
    }
    m_view->setCurrentIndex(index);
    m_view->scrollTo(index, QAbstractItemView::PositionAtCenter);
    return true;
}

bool TensorsView::selectModules(const QStringList& modules)
{
    const auto snapshot = m_document->snapshot();
    if (!snapshot || modules.isEmpty()) {
        return false;
    }
    QStringList escaped;
    for (const auto& module : modules) {
        escaped.append(QRegularExpression::escape(module));
    }
    // A module's tensors are "<module>.<param>"; a buffer such as d2t is its own tensor.
    const QString pattern = QStringLiteral("^(?:%1)(?:\\.|$)").arg(escaped.join(QLatin1Char('|')));
    QString first;
    const QRegularExpression re(pattern);
    for (const auto& row : snapshot->rows) {
        if (re.match(row.name).hasMatch()) {
            first = row.name;
            break;
        }
    }
    if (first.isEmpty()) {
        return false;
    }
    setFilter(pattern, true);
    return selectTensor(first);
}

bool TensorsView::selectNode(const QString& name)
{
    if (!isGrouped()) {
        return false;
    }
    // Groups are top level, modules right below them.
    for (int group = 0; group < m_proxy->rowCount(); ++group) {
        const QModelIndex groupIndex = m_proxy->index(group, 0);
        QModelIndex found =
            groupIndex.data(TensorColumns::NodeNameRole).toString() == name ? groupIndex : QModelIndex();
        for (int module = 0; !found.isValid() && module < m_proxy->rowCount(groupIndex); ++module) {
            const QModelIndex moduleIndex = m_proxy->index(module, 0, groupIndex);
            if (moduleIndex.data(TensorColumns::NodeNameRole).toString() == name) {
                found = moduleIndex;
            }
        }
        if (found.isValid()) {
            m_view->setCurrentIndex(found);
            m_view->scrollTo(found, QAbstractItemView::PositionAtCenter);
            return true;
        }
    }
    return false;
}

TensorSelection TensorsView::selectionOf(const QModelIndex& current) const
{
    const auto snapshot = m_document->snapshot();
    if (!snapshot || !current.isValid()) {
        return {};
    }
    const QModelIndex first = current.siblingAtColumn(0);
    const QString name = first.data(TensorColumns::NodeNameRole).toString();
    switch (first.data(TensorColumns::NodeKindRole).toInt()) {
    case TensorColumns::TensorNode:
        return {TensorSelection::Tensor, name, name};
    case TensorColumns::ModuleNode: {
        // The module stands for its weight (what a plan decides about), else its first tensor.
        QString tensor = name + QStringLiteral(".weight");
        if (snapshot->rowOf(tensor) < 0) {
            tensor.clear();
            for (const auto& row : snapshot->rows) {
                if (row.module == name) {
                    tensor = row.name;
                    break;
                }
            }
        }
        return {TensorSelection::Module, name, tensor};
    }
    case TensorColumns::GroupNode:
        return {TensorSelection::Group, name, QString()};
    default:
        return {};
    }
}

void TensorsView::onCurrentChanged(const QModelIndex& current, bool force)
{
    const TensorSelection selection = selectionOf(current);
    const auto snapshot = m_document->snapshot();
    if (snapshot) {
        m_detail->showSelection(*snapshot, selection);
    } else {
        m_detail->clear();
    }
    const QString name = selection.kind == TensorSelection::Tensor ? selection.name : QString();
    if (name != m_currentTensor) {
        m_currentTensor = name;
        Q_EMIT currentTensorChanged(name);
    }
    if (force || selection != m_selection) {
        m_selection = selection;
        Q_EMIT selectionChanged(selection);
    }
}

QByteArray TensorsView::saveState() const
{
    QByteArray state;
    QDataStream out(&state, QIODevice::WriteOnly);
    out << kStateMagic << kStateVersion << isGrouped() << m_regex->isChecked() << m_splitter->saveState()
        << m_view->header()->saveState();
    return state;
}

bool TensorsView::restoreState(const QByteArray& state)
{
    QDataStream in(state);
    quint32 magic = 0;
    quint32 version = 0;
    bool grouped = true;
    bool regex = false;
    QByteArray splitter;
    QByteArray header;
    in >> magic >> version >> grouped >> regex >> splitter >> header;
    if (in.status() != QDataStream::Ok || magic != kStateMagic || version != kStateVersion) {
        return false;
    }
    setGrouped(grouped);
    m_regex->setChecked(regex);
    m_splitter->restoreState(splitter);
    // Order and sorting come back; widths are fitted again on every open.
    m_view->header()->restoreState(header);
    m_view->header()->setStretchLastSection(false);
    return true;
}

void TensorsView::setSchemeLegend(const QStringList& schemes)
{
    QString html;
    for (const auto& scheme : schemes) {
        const QColor color = schemeColor(scheme);
        if (color.isValid()) {
            html += QStringLiteral(
                        "<span style=\"background-color:%1\">&nbsp;&nbsp;&nbsp;</span>&nbsp;%2&nbsp;&nbsp;")
                        .arg(color.name(QColor::HexArgb), scheme.toHtmlEscaped());
        }
    }
    m_legend->setText(html);
}

QString TensorsView::schemeLegendText() const
{
    return m_legend->text();
}

} // namespace spark
