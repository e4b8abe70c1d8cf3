#include "views/plan/plantab.h"

#include "core/audit/checker.h"
#include "core/plan/plancommand.h"
#include "core/plan/preset.h"
#include "core/plan/quantplan.h"
#include "core/quant/roundingmethod.h"
#include "views/document/document.h"
#include "views/export/exportdialog.h"
#include "views/plan/lintmodel.h"
#include "views/plan/plancontroller.h"
#include "views/plan/planentryeditor.h"
#include "views/plan/planmodulemodel.h"
#include "views/plan/summarybar.h"
#include "views/shared/elidinglabel.h"
#include "views/shared/formatting.h"

#include <QClipboard>
#include <QComboBox>
#include <QEvent>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelection>
#include <QLabel>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QStyle>
#include <QTableView>
#include <QVBoxLayout>

namespace spark {

namespace {

QLabel* sectionTitle(const QString& text, QWidget* parent)
{
    auto* label = new QLabel(text, parent);
    QFont bold = label->font();
    bold.setBold(true);
    label->setFont(bold);
    return label;
}

// A bold title line over its content, without a group box's frame and margins: the height goes to rows.
QWidget* section(QLabel* title, QWidget* content, QWidget* parent)
{
    auto* widget = new QWidget(parent);
    auto* layout = new QVBoxLayout(widget);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(1);
    layout->addWidget(title);
    layout->addWidget(content, 1);
    return widget;
}

// Sorts by PlanModuleModel::SortRole with modules that have no value (no analysis yet) last in either order.
class ModuleSortProxy : public QSortFilterProxyModel
{
  public:
    using QSortFilterProxyModel::QSortFilterProxyModel;

  protected:
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override
    {
        const QVariant a = left.data(sortRole());
        const QVariant b = right.data(sortRole());
        if (!a.isValid() || !b.isValid()) {
            return sortOrder() == Qt::AscendingOrder ? a.isValid() && !b.isValid()
                                                     : !a.isValid() && b.isValid();
        }
        return QSortFilterProxyModel::lessThan(left, right);
    }
};

} // namespace

PlanTab::PlanTab(PlanController* controller, QWidget* parent) : QWidget(parent), m_controller(controller)
{
    m_preset = new QComboBox(this);
    m_preset->setObjectName(QStringLiteral("presetBox"));
    m_preset->addItem(tr("auto (by architecture)"), QStringLiteral("auto"));
    m_preset->setItemData(0, tr("Picks the preset for the detected architecture."), Qt::ToolTipRole);
    for (const auto& preset : presets()) {
        m_preset->addItem(QString::fromStdString(preset.name), QString::fromStdString(preset.name));
        m_preset->setItemData(m_preset->count() - 1, QString::fromStdString(preset.description),
                              Qt::ToolTipRole);
    }
    m_presetDescription = new ElidingLabel(this);
    m_presetDescription->setObjectName(QStringLiteral("presetDescription"));
    m_presetDescription->setForegroundRole(QPalette::PlaceholderText);
    m_targetLayersLabel = new QLabel(tr("Target layers:"), this);
    m_targetLayers = new QSpinBox(this);
    m_targetLayers->setObjectName(QStringLiteral("targetLayers"));
    m_targetLayers->setRange(0, 1000);
    m_targetLayers->setSpecialValueText(tr("unknown"));
    m_targetLayers->setToolTip(tr("The target model's num_hidden_layers. vLLM offsets draft layer indices by "
                                  "it; this config does not state it."));
    m_targetLayersLabel->setBuddy(m_targetLayers);

    auto* top = new QHBoxLayout;
    auto* presetLabel = new QLabel(tr("&Preset:"), this);
    presetLabel->setBuddy(m_preset);
    top->addWidget(presetLabel);
    top->addWidget(m_preset);
    top->addWidget(m_presetDescription, 1);
    top->addWidget(m_targetLayersLabel);
    top->addWidget(m_targetLayers);
    auto* copyCommand =
        new QPushButton(QIcon::fromTheme(QStringLiteral("edit-copy")), tr("Copy as &Command"), this);
    copyCommand->setObjectName(QStringLiteral("copyCommand"));
    copyCommand->setToolTip(tr("Copy the sparkulator-cli quantize command that makes exactly this plan, for "
                               "scripts and CI."));
    connect(copyCommand, &QPushButton::clicked, this, &PlanTab::copyQuantizeCommand);
    top->addWidget(copyCommand);

    // The default scheme: what the targets select when no rule says otherwise (--bits/--group).
    m_defaultScheme = new QComboBox(this);
    m_defaultScheme->setObjectName(QStringLiteral("defaultScheme"));
    for (const auto& s : weightSchemes()) {
        if (s.family == SchemeFamily::IntSymmetric && s.product) {
            m_defaultScheme->addItem(schemeText(s), schemeText(s));
            m_defaultScheme->setItemData(
                m_defaultScheme->count() - 1,
                QString::fromLatin1(s.summary.data(), static_cast<qsizetype>(s.summary.size())),
                Qt::ToolTipRole);
        }
    }
    m_defaultScheme->setToolTip(tr("The scheme of modules the targets select and no scheme rule assigns."));
    connect(m_defaultScheme, &QComboBox::activated, this, [this](int index) {
        m_controller->setDefaultScheme(m_defaultScheme->itemData(index).toString());
    });
    auto* schemeLabel = new QLabel(tr("De&fault scheme:"), this);
    schemeLabel->setBuddy(m_defaultScheme);
    top->insertWidget(3, schemeLabel);
    top->insertWidget(4, m_defaultScheme);

    // The default rounding: how quantized modules no rounding rule names are rounded (--rounding METHOD).
    m_rounding = new QComboBox(this);
    m_rounding->setObjectName(QStringLiteral("defaultRounding"));
    for (const auto& method : roundingMethods()) {
        m_rounding->addItem(roundingText(method), roundingText(method));
        m_rounding->setItemData(m_rounding->count() - 1, roundingSummary(method), Qt::ToolTipRole);
    }
    connect(m_rounding, &QComboBox::activated, this,
            [this](int index) { m_controller->setDefaultRounding(m_rounding->itemData(index).toString()); });
    auto* roundingLabel = new QLabel(tr("&Rounding:"), this);
    roundingLabel->setBuddy(m_rounding);
    top->insertWidget(5, roundingLabel);
    top->insertWidget(6, m_rounding);
    // Focus follows the line left to right (the default scheme and the rounding were made after the rest).
    setTabOrder(m_preset, m_defaultScheme);
    setTabOrder(m_defaultScheme, m_rounding);
    setTabOrder(m_rounding, m_targetLayers);
    setTabOrder(m_targetLayers, copyCommand);

    // The four ordered lists of the plan share one editor, a tab each: the list in hand gets the column's
    // whole height and width, so a rule's full text stays readable (docs/app.md, "How the tabs are laid
    // out").
    m_rules = new PlanEntryEditor(controller, EntryKind::Target, this);
    m_rules->setTitle(tr("Targets"));
    m_rules->addList(PlanList::Ignore, tr("Ignore"));
    m_rules->addList(PlanList::Schemes, tr("Schemes"));
    m_rules->addList(PlanList::Roundings, tr("Rounding"));
    m_rules->tabBar()->setToolTip(
        tr("Targets select the modules to quantize, Ignore keeps modules BF16; scheme rules ENTRY=SCHEME "
           "choose what a module is quantized to, rounding rules ENTRY=METHOD how its scales are chosen. In "
           "each list later rules win; the lists apply independently."));
    m_modules = new PlanModuleModel(this);
    m_modulesProxy = new ModuleSortProxy(this);
    m_modulesProxy->setSourceModel(m_modules);
    m_modulesProxy->setSortRole(PlanModuleModel::SortRole);
    m_modulesView = new QTableView(this);
    m_modulesView->setObjectName(QStringLiteral("planModules"));
    m_modulesView->setModel(m_modulesProxy);
    m_modulesView->setSortingEnabled(true);
    m_modulesView->sortByColumn(PlanModuleModel::Module, Qt::AscendingOrder);
    m_modulesView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_modulesView->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_modulesView->verticalHeader()->hide();
    m_modulesView->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_modulesView->horizontalHeader()->setStretchLastSection(true);
    m_modulesView->setWordWrap(false);
    const int charWidth = fontMetrics().averageCharWidth();
    // The names elide in the middle (their full text is the tooltip), so that beside the rules editor the
    // decision, error and both byte columns stay in view at 1200 pixels.
    m_modulesView->setTextElideMode(Qt::ElideMiddle);
    m_modulesView->setColumnWidth(PlanModuleModel::Module, kMinimumModuleWidth);
    m_modulesView->viewport()->installEventFilter(this);
    m_modulesView->setColumnWidth(PlanModuleModel::Role, charWidth * 8);
    m_modulesView->setColumnWidth(PlanModuleModel::Decision, charWidth * 23);
    m_modulesView->setColumnWidth(PlanModuleModel::RelError, charWidth * 11);
    m_modulesView->setColumnWidth(PlanModuleModel::Reason, charWidth * 60);
    m_modulesView->setColumnWidth(PlanModuleModel::Bytes, charWidth * 13);
    m_modulesView->setColumnWidth(PlanModuleModel::BytesAfter, charWidth * 13);
    // What a user decides by comes first: module, decision, error and bytes; the vLLM name and role follow
    // (both also in the detail of a row), and the wide reason goes last.
    auto* header = m_modulesView->horizontalHeader();
    for (const int column : {PlanModuleModel::VllmName, PlanModuleModel::Role, PlanModuleModel::Reason}) {
        header->moveSection(header->visualIndex(column), PlanModuleModel::ColumnCount - 1);
    }

    m_lint = new LintModel(this);
    m_lintView = new QTableView(this);
    m_lintView->setObjectName(QStringLiteral("lintView"));
    m_lintView->setModel(m_lint);
    m_lintView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_lintView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_lintView->verticalHeader()->hide();
    const int lintRowHeight = std::max(fontMetrics().height(), 16) + 6;
    m_lintView->verticalHeader()->setDefaultSectionSize(lintRowHeight);
    m_lintView->horizontalHeader()->setStretchLastSection(true);
    m_lintView->setWordWrap(false);
    // The findings elide to the column (full text as tooltip): a scroll bar would take a row's height.
    m_lintView->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // Severity (icon and word) and the rule id are never shortened; the finding takes what is left.
    m_lintView->horizontalHeader()->setSectionResizeMode(LintModel::Severity, QHeaderView::ResizeToContents);
    m_lintView->horizontalHeader()->setSectionResizeMode(LintModel::Id, QHeaderView::ResizeToContents);
    m_lintView->setColumnWidth(LintModel::Modules, charWidth * 30);

    m_errors = new QLabel(this);
    m_errors->setObjectName(QStringLiteral("planErrors"));
    m_errors->setWordWrap(true);
    m_errors->hide();
    m_summary = new SummaryBar(this);
    m_quantizedNote = new QLabel(this);
    m_quantizedNote->setObjectName(QStringLiteral("quantizedNote"));
    m_quantizedNote->setWordWrap(true);
    m_quantizedNote->hide();

    // The lint keeps four rows (and whatever a user drags it to); the modules take every other pixel.
    m_lintView->setMinimumHeight(m_lintView->horizontalHeader()->sizeHint().height() + 4 * lintRowHeight +
                                 2 * m_lintView->frameWidth());
    m_lintTitle = sectionTitle(tr("Lint"), this);
    auto* checks = new QSplitter(Qt::Vertical, this);
    checks->setObjectName(QStringLiteral("planModulesSplitter"));
    checks->addWidget(section(sectionTitle(tr("Modules"), this), m_modulesView, checks));
    checks->addWidget(section(m_lintTitle, m_lintView, checks));
    checks->setStretchFactor(0, 1);
    checks->setStretchFactor(1, 0);
    checks->setChildrenCollapsible(false);
    // Extra height goes by stretch factor: starting the lint at its minimum leaves every other row to the
    // modules.
    checks->setSizes({1, checks->widget(1)->minimumSizeHint().height()});
    // The left column: the rules over the sizes and predictions, and below them what blocks the export, so
    // that a banner coming and going moves the rules, never the modules.
    auto* entries = new QSplitter(Qt::Vertical, this);
    entries->setObjectName(QStringLiteral("planEntriesSplitter"));
    entries->addWidget(m_rules);
    entries->addWidget(section(sectionTitle(tr("Sizes and speed"), this), m_summary, entries));
    entries->setStretchFactor(0, 1);
    entries->setStretchFactor(1, 0);
    entries->setChildrenCollapsible(false);
    entries->setSizes({1, entries->widget(1)->sizeHint().height()});
    auto* left = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(entries, 1);
    leftLayout->addWidget(m_errors);
    leftLayout->addWidget(m_quantizedNote);

    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("planSplitter"));
    split->addWidget(left);
    split->addWidget(checks);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    split->setChildrenCollapsible(false);
    split->setSizes({charWidth * 64, charWidth * 136});

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(split, 1);

    connect(m_preset, &QComboBox::activated, this,
            [this](int index) { m_controller->setPreset(m_preset->itemData(index).toString()); });
    connect(m_targetLayers, &QSpinBox::valueChanged, this, [this](int value) {
        m_controller->setTargetLayers(value > 0 ? std::optional<int>(value) : std::nullopt);
    });
    connect(m_modules, &PlanModuleModel::toggleRequested, this, [this](const QString& module) {
        QString message;
        m_controller->toggleModule(module, &message);
        Q_EMIT statusMessage(message);
    });
    connect(m_lintView, &QAbstractItemView::clicked, this, [this](const QModelIndex& index) {
        const QStringList modules = index.data(LintModel::ModulesRole).toStringList();
        if (selectModules(modules) > 0) {
            Q_EMIT lintModulesActivated(modules);
        }
    });
    connect(m_controller, &PlanController::planChanged, this, &PlanTab::onPlanChanged);
    connect(m_controller, &PlanController::editsChanged, this, &PlanTab::onEditsChanged);
    connect(m_controller->document(), &Document::snapshotChanged, this, &PlanTab::onSnapshotChanged);
    connect(m_controller->document(), &Document::analysisChanged, this, [this] {
        const Document* document = m_controller->document();
        m_modules->setAnalysis(document->snapshot(), document->analysis());
    });
    onEditsChanged();
    onPlanChanged();
    onSnapshotChanged();
}

QString PlanTab::quantizeCommandText() const
{
    const auto snapshot = m_controller->document()->snapshot();
    if (!snapshot || snapshot->folder.isEmpty()) {
        return {};
    }
    const PlanOptions options = m_controller->planOptions();
    const auto plan = m_controller->plan();
    const QString output = ExportDialog::defaultOutput(snapshot->folder, plan ? ExportDialog::schemeTag(*plan)
                                                                              : QStringLiteral("w4a16"));
    return QString::fromStdString(
        quantizeCommand(snapshot->folder.toStdString(), output.toStdString(), options));
}

void PlanTab::copyQuantizeCommand()
{
    const QString command = quantizeCommandText();
    if (command.isEmpty()) {
        Q_EMIT statusMessage(tr("Open a draft checkpoint first."));
        return;
    }
    QGuiApplication::clipboard()->setText(command);
    Q_EMIT statusMessage(tr("Copied: %1").arg(command));
}

QString PlanTab::errorText() const
{
    return m_errors->isHidden() ? QString() : m_errors->text();
}

int PlanTab::selectModules(const QStringList& modules)
{
    QItemSelection selection;
    for (const auto& module : modules) {
        const int row = m_modules->rowOf(module);
        if (row < 0) {
            continue;
        }
        const QModelIndex left = m_modulesProxy->mapFromSource(m_modules->index(row, 0));
        const QModelIndex right =
            m_modulesProxy->mapFromSource(m_modules->index(row, PlanModuleModel::ColumnCount - 1));
        selection.select(left, right);
    }
    m_modulesView->selectionModel()->select(selection,
                                            QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    if (!selection.isEmpty()) {
        m_modulesView->scrollTo(selection.indexes().front());
    }
    return static_cast<int>(selection.size());
}

void PlanTab::onEditsChanged()
{
    const auto& edits = m_controller->edits();
    {
        const QSignalBlocker block(m_preset);
        m_preset->setCurrentIndex(std::max(0, m_preset->findData(edits.preset)));
    }
    {
        const QSignalBlocker block(m_targetLayers);
        m_targetLayers->setValue(edits.targetLayers.value_or(0));
    }
    m_defaultScheme->setCurrentIndex(std::max(0, m_defaultScheme->findData(edits.defaultScheme)));
    m_rounding->setCurrentIndex(std::max(0, m_rounding->findData(edits.rounding)));
    updateRoundingToolTip();
}

void PlanTab::updateRoundingToolTip()
{
    m_rounding->setToolTip(tr("The rounding method of quantized modules no rounding rule names: %1")
                               .arg(m_rounding->currentData(Qt::ToolTipRole).toString()));
}

void PlanTab::onSnapshotChanged()
{
    const auto snapshot = m_controller->document()->snapshot();
    m_modules->setAnalysis(snapshot, m_controller->document()->analysis());
    const auto report = snapshot ? snapshot->audit : nullptr;
    m_lint->setCheckReport(report);
    m_lintTitle->setText(report ? tr("Findings of check") : tr("Lint"));
    if (!report) {
        m_quantizedNote->hide();
        m_quantizedNote->clear();
        return;
    }
    // A plan quantizes a BF16 source; on a checkpoint that is already quantized it would describe nothing
    // real, so the panel shows what `sparkulator-cli check` finds in it instead.
    m_quantizedNote->setText(
        tr("This draft is already quantized: the plan below does not apply to it, and the "
           "findings are those of `sparkulator-cli check` (%1).")
            .arg(QString::fromStdString(report->summary())));
    m_quantizedNote->show();
}

bool PlanTab::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_modulesView->viewport() && event->type() == QEvent::Resize) {
        fitModuleColumn();
    }
    return QWidget::eventFilter(watched, event);
}

void PlanTab::fitModuleColumn()
{
    // The whole name where the window has room: sibling names elided in the middle read alike
    // ("midlaye…yernorm" for input_layernorm and post_attention_layernorm). At most what leaves the
    // decision, its error and both sizes in view; where they leave it, at least kMinimumModuleWidth.
    const QFontMetrics metrics = m_modulesView->fontMetrics();
    const auto widestOf = [&](int column) {
        int widest = 0;
        for (int row = 0; row < m_modulesProxy->rowCount(); ++row) {
            widest = std::max(
                widest, metrics.horizontalAdvance(m_modulesProxy->index(row, column).data().toString()));
        }
        return widest;
    };
    const int widest = widestOf(PlanModuleModel::Module);
    const int padding =
        2 * m_modulesView->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, m_modulesView) +
        metrics.averageCharWidth() * 2;
    int decisionColumns = 0;
    for (const int column : {PlanModuleModel::Decision, PlanModuleModel::RelError, PlanModuleModel::Bytes,
                             PlanModuleModel::BytesAfter}) {
        decisionColumns += m_modulesView->columnWidth(column);
    }
    const int room = m_modulesView->viewport()->width() - decisionColumns;
    m_modulesView->setColumnWidth(PlanModuleModel::Module, std::max(std::min(widest + padding, room),
                                                                    std::min(kMinimumModuleWidth, room)));
    // The vLLM names come after the decision, where the view scrolls: whole.
    m_modulesView->setColumnWidth(PlanModuleModel::VllmName, widestOf(PlanModuleModel::VllmName) + padding);
}

void PlanTab::markPresetsOfOtherArchitectures(const ArchitectureInfo& arch)
{
    // Still offered (a user may want one's entries as a start), but never without a word.
    const QString draft = QString::fromUtf8(arch.traits().displayName.data(),
                                            static_cast<qsizetype>(arch.traits().displayName.size()));
    for (int i = 0; i < m_preset->count(); ++i) {
        const Preset* preset = findPreset(m_preset->itemData(i).toString().toStdString());
        if (!preset) {
            continue;
        }
        const bool suits = presetSuits(*preset, arch);
        const QString name = QString::fromStdString(preset->name);
        m_preset->setItemText(i, suits ? name : tr("%1 — not for this draft").arg(name));
        m_preset->setItemData(i,
                              suits ? QString::fromStdString(preset->description)
                                    : tr("Written for another architecture: its entries name modules this %1 "
                                         "draft may not have.\n\n%2")
                                          .arg(draft, QString::fromStdString(preset->description)),
                              Qt::ToolTipRole);
    }
}

void PlanTab::onPlanChanged()
{
    const auto plan = m_controller->plan();
    m_modules->resetData(plan);
    fitModuleColumn();
    m_lint->resetData(plan);
    m_summary->setPlan(plan);
    if (!plan) {
        m_presetDescription->setFullText({});
        m_errors->hide();
        m_targetLayersLabel->hide();
        m_targetLayers->hide();
        return;
    }
    markPresetsOfOtherArchitectures(plan->architecture);
    const Preset* preset = findPreset(plan->preset);
    m_presetDescription->setFullText(preset ? tr("%1: %2").arg(QString::fromStdString(preset->name),
                                                               QString::fromStdString(preset->description))
                                            : QString());
    // Only architectures whose config does not state the target's layer count need the input.
    const bool needsLayers = !plan->architecture.targetLayers.has_value();
    m_targetLayersLabel->setVisible(needsLayers);
    m_targetLayers->setVisible(needsLayers);
    if (plan->errors.empty()) {
        m_errors->hide();
        m_errors->clear();
        return;
    }
    QStringList lines;
    for (const auto& e : plan->errors) {
        lines.append(QString::fromStdString(e));
    }
    m_errors->setText(
        tr("Export is blocked until the plan has no errors: %1").arg(lines.join(QStringLiteral("; "))));
    QPalette palette = m_errors->palette();
    const bool dark = palette.color(QPalette::Window).lightness() < 128;
    palette.setColor(QPalette::WindowText, dark ? QColor(255, 128, 128) : QColor(176, 0, 32));
    m_errors->setPalette(palette);
    m_errors->show();
}

} // namespace spark
