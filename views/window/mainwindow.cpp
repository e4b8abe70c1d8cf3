#include "views/window/mainwindow.h"

#include "core/bench/speedmodelplan.h"
#include "core/plan/planfile.h"
#include "views/acceptance/acceptancepanel.h"
#include "views/analysis/analysiscontroller.h"
#include "views/analysis/analysispanel.h"
#include "views/bench/benchmarkstab.h"
#include "views/bench/speedmodelpanel.h"
#include "views/compare/compareview.h"
#include "views/document/checkpointloader.h"
#include "views/document/document.h"
#include "views/export/exportdialog.h"
#include "views/plan/budgetpanel.h"
#include "views/plan/plancontroller.h"
#include "views/plan/planmodulemodel.h"
#include "views/plan/plantab.h"
#include "views/plan/summarybar.h"
#include "views/shared/checkpointpaths.h"
#include "views/shared/formatting.h"
#include "views/shared/theme.h"
#include "views/tensors/storedweightsection.h"
#include "views/tensors/tensordetailpanel.h"
#include "views/tensors/tensorerrorsection.h"
#include "views/tensors/tensorplansection.h"
#include "views/tensors/tensorsview.h"
#include "views/tensors/tensorsweepsection.h"
#include "views/window/exampledraft.h"
#include "views/window/recentfiles.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QTreeView>
#include <QUndoStack>
namespace spark {

namespace {

const char* const kTabIdProperty = "sparkTabId";

QString settingsKey(const char* key)
{
    return QStringLiteral("mainWindow/") + QLatin1String(key);
}

} // namespace

MainWindow::MainWindow(QWidget* parent) : MainWindow(MainWindowOptions{}, parent) {}

MainWindow::MainWindow(const MainWindowOptions& options, QWidget* parent)
    : QMainWindow(parent), m_options(options), m_document(new Document(this)),
      m_loader(new CheckpointLoader(this)), m_recent(new RecentFiles(nullptr, this)),
      m_tabs(new QTabWidget(this)), m_tensorsView(new TensorsView(m_document, m_tabs))
{
    // [*] marks unsaved plan edits (setWindowModified follows the plan's undo stack).
    setWindowTitle(tr("Sparkulator[*]"));
    setAcceptDrops(true);
    m_tabs->setDocumentMode(true);
    addTab(QStringLiteral("tensors"), m_tensorsView, tr("&Tensors"));
    setCentralWidget(m_tabs);

    m_summary = new QLabel(this);
    m_busy = new QProgressBar(this);
    m_busy->setRange(0, 0); // opening has no measurable progress: show activity only
    m_busy->setMaximumWidth(fontMetrics().averageCharWidth() * 16);
    m_busy->hide();
    statusBar()->addPermanentWidget(m_busy);
    statusBar()->addPermanentWidget(m_summary);
    connect(statusBar(), &QStatusBar::messageChanged, this, &MainWindow::fitStatusMessage);
    statusBar()->showMessage(tr("Open a draft checkpoint (folder, .safetensors or index) to inspect it."));

    createAnalysisAndPlan();
    createBudget();
    // Offline acceptance of the open draft on captured target hidden states; its per-unit sensitivity
    // becomes the Budget tab's α.
    auto* acceptance = new AcceptancePanel(m_planController, m_tabs);
    m_acceptancePanel = acceptance;
    addTab(QStringLiteral("acceptance"), acceptance, tr("A&cceptance"));
    connect(acceptance, &AcceptancePanel::alphaRulesRequested, this,
            [this](const QStringList& rules, const QString& source) {
                m_budgetPanel->setExternalAlphas(rules, source);
                showTab(QStringLiteral("budget"));
            });
    connect(acceptance, &AcceptancePanel::statusMessage, this,
            [this](const QString& message) { statusBar()->showMessage(message, 8000); });
    // Scoring plans by acceptance reads the capture, target and k set in the Acceptance tab.
    m_budgetPanel->setAcceptanceInputsSource(
        [acceptance](QString* why) -> std::optional<AcceptanceObjectiveInputs> {
            const auto job = acceptance->jobFromInputs(why);
            if (!job) {
                return std::nullopt;
            }
            AcceptanceObjectiveInputs inputs;
            inputs.draft = job->draft;
            inputs.capture = job->capture;
            inputs.captureOptions = job->captureOptions;
            inputs.target = job->target;
            inputs.k = job->options.k;
            inputs.threads = job->options.threads;
            inputs.anchors.seed = job->options.seed;
            // The tab's anchor count sizes the confirmation; the screen takes a quarter of it.
            if (job->options.anchorCount > 0) {
                inputs.anchors.confirm = job->options.anchorCount;
                inputs.anchors.screen = std::max<std::int64_t>(1, job->options.anchorCount / 4);
            }
            return inputs;
        });
    m_benchmarksTab = new BenchmarksTab(m_tabs);
    addTab(QStringLiteral("benchmarks"), m_benchmarksTab, tr("&Benchmarks"));
    // Two checkpoints side by side: a source and any quantized output of it.
    m_compareView = new CompareView(m_tabs);
    addTab(QStringLiteral("compare"), m_compareView, tr("C&ompare"));
    // The open draft is the likely source (or, when already quantized, the likely output) of a comparison.
    connect(this, &MainWindow::documentLoaded, m_compareView, [this](const QString& path) {
        const auto snapshot = m_document->snapshot();
        m_compareView->suggestPath(path, snapshot && snapshot->isQuantized());
    });
    connectSpeedModel();
    createActions();
    connect(m_loader, &CheckpointLoader::loaded, this, &MainWindow::onLoaded);
    connect(m_loader, &CheckpointLoader::failed, this, &MainWindow::onFailed);
    connect(m_recent, &RecentFiles::changed, this, &MainWindow::rebuildRecentMenu);

    // Sized in text units so the first window fits its columns at any DPI, within the screen.
    QSize size = preferredSize();
    if (const QScreen* screen = this->screen()) {
        size = size.boundedTo(screen->availableGeometry().size() * 9 / 10);
    }
    resize(size);

    if (m_options.persistState) {
        QSettings settings;
        restoreGeometry(settings.value(settingsKey("geometry")).toByteArray());
        restoreState(settings.value(settingsKey("state")).toByteArray());
        m_tensorsView->restoreState(settings.value(settingsKey("tensorsView")).toByteArray());
    }
}

MainWindow::~MainWindow() = default;

QSize MainWindow::preferredSize() const
{
    const QFontMetrics metrics = fontMetrics();
    return {metrics.averageCharWidth() * 200, metrics.height() * 50};
}

void MainWindow::createActions()
{
    auto* fileMenu = menuBar()->addMenu(tr("&File"));
    auto* openFolder = fileMenu->addAction(QIcon::fromTheme(QStringLiteral("folder-open")),
                                           tr("Open &Folder…"), this, &MainWindow::openFolder);
    openFolder->setShortcut(QKeySequence::Open);
    openFolder->setStatusTip(tr("Open a checkpoint folder (safetensors shards, index and config.json)."));
    auto* openFile = fileMenu->addAction(QIcon::fromTheme(QStringLiteral("document-open")), tr("Open F&ile…"),
                                         this, &MainWindow::openFile);
    openFile->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    openFile->setStatusTip(tr("Open a single .safetensors file or a model.safetensors.index.json."));
    m_openExampleAction = fileMenu->addAction(tr("Open E&xample"), this, &MainWindow::openExample);
    const auto example = findExampleDraft();
    m_openExampleAction->setEnabled(example.has_value());
    m_openExampleAction->setStatusTip(
        example
            ? tr("Open a trained EAGLE-3 head with its capture and target model: every tab is ready to run.")
            : tr("No example is installed beside this program."));
    m_recentMenu = fileMenu->addMenu(tr("Open &Recent"));
    rebuildRecentMenu();
    fileMenu->addSeparator();
    m_openPlanAction = fileMenu->addAction(tr("Open P&lan…"), this, &MainWindow::openPlanFile);
    m_openPlanAction->setObjectName(QStringLiteral("openPlanAction"));
    m_openPlanAction->setStatusTip(
        tr("Apply a saved plan file (preset, entries, scheme rules) to this draft."));
    m_savePlanAction = fileMenu->addAction(QIcon::fromTheme(QStringLiteral("document-save")),
                                           tr("&Save Plan"), this, &MainWindow::savePlanFile);
    m_savePlanAction->setObjectName(QStringLiteral("savePlanAction"));
    m_savePlanAction->setShortcut(QKeySequence::Save);
    m_savePlanAction->setStatusTip(
        tr("Save the plan edits to a plan file (sparkulator-cli --plan-file reads it)."));
    auto* savePlanAs = fileMenu->addAction(QIcon::fromTheme(QStringLiteral("document-save-as")),
                                           tr("Save Plan &As…"), this, &MainWindow::savePlanFileAs);
    savePlanAs->setShortcut(QKeySequence::SaveAs);
    const auto updatePlanFile = [this, savePlanAs] {
        const bool open = m_document->snapshot() != nullptr;
        m_openPlanAction->setEnabled(open);
        m_savePlanAction->setEnabled(open);
        savePlanAs->setEnabled(open);
    };
    updatePlanFile();
    connect(this, &MainWindow::documentLoaded, this, updatePlanFile);
    connect(m_planController->undoStack(), &QUndoStack::cleanChanged, this,
            [this](bool clean) { setWindowModified(!clean); });
    fileMenu->addSeparator();
    m_exportAction = fileMenu->addAction(QIcon::fromTheme(QStringLiteral("document-export")), tr("&Export…"),
                                         this, &MainWindow::showExportDialog);
    m_exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    const auto updateExport = [this] {
        const bool ready = currentPlan() != nullptr;
        m_exportAction->setEnabled(ready);
        m_exportAction->setStatusTip(ready
                                         ? tr("Write the W4A16 compressed-tensors checkpoint of the plan.")
                                         : tr("Export needs an open checkpoint and a plan without errors."));
    };
    updateExport();
    connect(this, &MainWindow::planChanged, this, updateExport);
    connect(this, &MainWindow::documentLoaded, this, updateExport);
    fileMenu->addSeparator();
    auto* quit = fileMenu->addAction(QIcon::fromTheme(QStringLiteral("application-exit")), tr("&Quit"), this,
                                     &QWidget::close);
    // Ctrl+Q everywhere, plus the platform's own quit key where it differs (on Linux QKeySequence::Quit is
    // Ctrl+Q itself: the same sequence twice on one action makes Qt call it ambiguous and do nothing).
    QList<QKeySequence> quitKeys{QKeySequence(Qt::CTRL | Qt::Key_Q)};
    for (const auto& key : QKeySequence::keyBindings(QKeySequence::Quit)) {
        if (!quitKeys.contains(key)) {
            quitKeys.append(key);
        }
    }
    quit->setShortcuts(quitKeys);
    quit->setMenuRole(QAction::QuitRole);

    auto* editMenu = menuBar()->addMenu(tr("&Edit"));
    auto* find =
        editMenu->addAction(QIcon::fromTheme(QStringLiteral("edit-find")), tr("&Find Tensor"), this, [this] {
            showTab(QStringLiteral("tensors"));
            m_tensorsView->focusFilter();
        });
    find->setShortcut(QKeySequence::Find);
    find->setStatusTip(tr("Filter the tensor list by name."));
    editMenu->addSeparator();
    QUndoStack* undo = m_planController->undoStack();
    auto* undoAction = undo->createUndoAction(this, tr("&Undo"));
    undoAction->setIcon(QIcon::fromTheme(QStringLiteral("edit-undo")));
    undoAction->setShortcut(QKeySequence::Undo);
    undoAction->setStatusTip(tr("Undo the last plan edit."));
    editMenu->addAction(undoAction);
    auto* redoAction = undo->createRedoAction(this, tr("&Redo"));
    redoAction->setIcon(QIcon::fromTheme(QStringLiteral("edit-redo")));
    // Ctrl+Shift+Z everywhere, and the platform's own redo key (Ctrl+Y on Windows) besides.
    QList<QKeySequence> redoKeys{QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z)};
    for (const auto& key : QKeySequence::keyBindings(QKeySequence::Redo)) {
        if (!redoKeys.contains(key)) {
            redoKeys.append(key);
        }
    }
    redoAction->setShortcuts(redoKeys);
    redoAction->setStatusTip(tr("Redo the plan edit undone last."));
    editMenu->addAction(redoAction);

    auto* viewMenu = menuBar()->addMenu(tr("&View"));
    auto* grouped = viewMenu->addAction(tr("&Group by Layer"));
    grouped->setCheckable(true);
    grouped->setChecked(m_tensorsView->isGrouped());
    grouped->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
    connect(grouped, &QAction::toggled, m_tensorsView, &TensorsView::setGrouped);
    connect(m_tensorsView, &TensorsView::groupedChanged, grouped, &QAction::setChecked);
    viewMenu->addAction(tr("&Expand All"), m_tensorsView->treeView(), &QTreeView::expandAll);
    viewMenu->addAction(tr("&Collapse All"), m_tensorsView->treeView(), &QTreeView::collapseAll);
    viewMenu->addSeparator();
    // System, Light or Dark: applied at once to the whole application and remembered for the next start.
    auto* themeMenu = viewMenu->addMenu(tr("&Theme"));
    themeMenu->setObjectName(QStringLiteral("themeMenu"));
    auto* themes = new QActionGroup(themeMenu);
    themes->setExclusive(true);
    const std::pair<Theme, QString> choices[] = {
        {Theme::System, tr("&System")}, {Theme::Light, tr("&Light")}, {Theme::Dark, tr("&Dark")}};
    for (const auto& [theme, text] : choices) {
        auto* action = themeMenu->addAction(text);
        action->setObjectName(QStringLiteral("theme-") + themeName(theme));
        action->setCheckable(true);
        action->setChecked(theme == currentTheme());
        themes->addAction(action);
        connect(action, &QAction::triggered, this, [this, theme] {
            applyTheme(theme);
            if (m_options.persistState) {
                storeTheme(theme);
            }
        });
    }

    auto* analyzeMenu = menuBar()->addMenu(tr("&Analyze"));
    auto* analyze =
        analyzeMenu->addAction(QIcon::fromTheme(QStringLiteral("media-playback-start")),
                               tr("&Analyze Quantization Error"), m_analysis, &AnalysisPanel::analyze);
    analyze->setObjectName(QStringLiteral("analyzeAction"));
    analyze->setShortcut(QKeySequence(Qt::Key_F5));
    analyze->setStatusTip(
        tr("Measure the error of the selected scheme on every 2-D weight (nothing is written)."));
    // Esc stops every long job that runs: the analysis, the Budget tab's sweep, scoring and measurement,
    // the Acceptance tab's run, sensitivity ranking, capture check and conversion.
    auto* cancel =
        analyzeMenu->addAction(QIcon::fromTheme(QStringLiteral("process-stop")), tr("&Cancel"), this, [this] {
            m_analysisController->cancel();
            m_budgetPanel->cancelSweep();
            m_acceptancePanel->cancel();
        });
    cancel->setObjectName(QStringLiteral("cancelAction"));
    cancel->setShortcut(QKeySequence(Qt::Key_Escape));
    // Enabled only while a job runs, so Esc still closes editors and popups the rest of the time.
    cancel->setEnabled(false);
    const auto follow = [this, cancel] {
        cancel->setEnabled(m_analysisController->isRunning() || m_budgetPanel->isRunning() ||
                           m_acceptancePanel->isRunning());
    };
    connect(m_analysisController, &AnalysisController::started, cancel, follow);
    connect(m_analysisController, &AnalysisController::finished, cancel, follow);
    connect(m_budgetPanel, &BudgetPanel::runningChanged, cancel, follow);
    connect(m_acceptancePanel, &AcceptancePanel::runningChanged, cancel, follow);
    analyzeMenu->addSeparator();
    auto* showPlan =
        analyzeMenu->addAction(tr("Show &Plan"), this, [this] { showTab(QStringLiteral("plan")); });
    showPlan->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_2));
    auto* showTensors =
        analyzeMenu->addAction(tr("Show &Tensors"), this, [this] { showTab(QStringLiteral("tensors")); });
    showTensors->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_1));

    auto* helpMenu = menuBar()->addMenu(tr("&Help"));
    auto* about = helpMenu->addAction(tr("&About Sparkulator"), this, &MainWindow::showAbout);
    about->setMenuRole(QAction::AboutRole);
    auto* aboutQt = helpMenu->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
    aboutQt->setMenuRole(QAction::AboutQtRole);
}

void MainWindow::createAnalysisAndPlan()
{
    m_planController = new PlanController(m_document, this);
    m_analysisController = new AnalysisController(m_document, this);
    m_analysis = new AnalysisPanel(m_analysisController, this);

    auto* toolbar = addToolBar(tr("Analyze"));
    toolbar->setObjectName(QStringLiteral("analyzeToolbar"));
    toolbar->setMovable(false);
    toolbar->addWidget(m_analysis);

    m_planTab = new PlanTab(m_planController, m_tabs);
    addTab(QStringLiteral("plan"), m_planTab, tr("&Plan"));

    m_planSection = new TensorPlanSection(m_planController);
    m_tensorsView->detailPanel()->addSection(tr("Plan"), m_planSection);
    m_errorSection = new TensorErrorSection(m_analysisController);
    m_tensorsView->detailPanel()->addSection(tr("Quantization error"), m_errorSection);
    // An already-quantized draft: its stored scheme and dequantized weights (hidden for a BF16 draft).
    m_storedSection = new StoredWeightSection(m_document);
    m_tensorsView->detailPanel()->addSection(tr("Stored weights"), m_storedSection);
    m_storedSection->setTensor({});
    // The sections follow the current row: a tensor, a module (shown through its weight) or a layer.
    connect(m_tensorsView, &TensorsView::selectionChanged, this, [this](const TensorSelection& selection) {
        m_planSection->setSelection(selection);
        m_errorSection->setSelection(selection);
        m_storedSection->setTensor(selection.tensor);
        if (m_sweepSection) {
            m_sweepSection->setTensor(selection.tensor);
        }
    });

    // The Plan tab shows each module's planned scheme's error: it must know which scheme the analysis used.
    // The tensors view follows the same rule.
    m_planTab->moduleModel()->setAnalysisScheme(&m_analysisController->scheme());
    m_tensorsView->setAnalysisScheme(&m_analysisController->scheme());
    // F5 measures each planned module under its plan, so that a mixed plan's errors are all measured.
    m_analysisController->setPlanSource([this] { return m_planController->plan(); });
    connect(m_analysisController, &AnalysisController::schemeChanged, this, [this](const QString& name) {
        m_planTab->moduleModel()->setAnalysisScheme(&m_analysisController->scheme());
        m_tensorsView->setAnalysisScheme(&m_analysisController->scheme());
        m_planController->setDefaultScheme(name); // an undoable plan edit; none when it is already so
    });
    // The toolbar's scheme is the plan's default scheme: one choice, whichever control, undo or plan file
    // changes it (two pickers that meant different things read as one).
    connect(m_planController, &PlanController::editsChanged, this, [this] {
        if (const auto* scheme = findWeightScheme(m_planController->edits().defaultScheme.toStdString())) {
            m_analysisController->setScheme(*scheme);
        }
    });
    // Re-running analyze clears the Document's analysis, decisions included: the plan writes them again.
    connect(m_analysisController, &AnalysisController::analysisCleared, m_planController,
            &PlanController::publishDecisions);
    connect(m_analysisController, &AnalysisController::statusMessage, this,
            [this](const QString& message, int timeoutMs) { statusBar()->showMessage(message, timeoutMs); });
    connect(m_planTab, &PlanTab::statusMessage, this,
            [this](const QString& message) { statusBar()->showMessage(message, 8000); });
    connect(m_planTab, &PlanTab::lintModulesActivated, m_tensorsView, &TensorsView::selectModules);
    // The Tensors tab's decision checkboxes edit the plan's entries exactly like the Plan tab's.
    connect(m_tensorsView, &TensorsView::decisionToggleRequested, this, [this](const QString& module) {
        QString message;
        m_planController->toggleModule(module, &message);
        statusBar()->showMessage(message, 8000);
    });
    connect(m_tensorsView, &TensorsView::schemeChangeRequested, this,
            [this](const QString& module, const QString& scheme) {
                QString message;
                m_planController->setModuleScheme(module, scheme, &message);
                statusBar()->showMessage(message, 8000);
            });
    connect(m_planController, &PlanController::planChanged, this, [this] {
        QStringList schemes;
        if (const auto plan = m_planController->plan()) {
            for (const auto* s : plan->schemesUsed()) {
                schemes.append(schemeText(*s));
            }
        }
        m_tensorsView->setSchemeLegend(schemes);
    });
    connect(m_planController, &PlanController::planChanged, this, &MainWindow::planChanged);
    connect(m_planController, &PlanController::editsChanged, this, &MainWindow::planChanged);
}

void MainWindow::createBudget()
{
    m_budgetPanel = new BudgetPanel(m_planController, m_tabs);
    addTab(QStringLiteral("budget"), m_budgetPanel, tr("B&udget"));
    m_sweepSection = new TensorSweepSection;
    m_tensorsView->detailPanel()->addSection(tr("Sensitivity sweep"), m_sweepSection);
    m_sweepSection->setTensor(m_tensorsView->selection().tensor);
    connect(m_budgetPanel, &BudgetPanel::sweepChanged, m_sweepSection, &TensorSweepSection::setSweep);
    // The sweep measured every legal scheme of every unit: the Plan tab shows a budget plan's errors from it.
    connect(m_budgetPanel, &BudgetPanel::sweepChanged, m_planTab->moduleModel(), &PlanModuleModel::setSweep);
    connect(m_budgetPanel, &BudgetPanel::sweepChanged, m_tensorsView, &TensorsView::setSweep);
    connect(m_budgetPanel, &BudgetPanel::statusMessage, this,
            [this](const QString& message) { statusBar()->showMessage(message, 8000); });
}

void MainWindow::connectSpeedModel()
{
    // The Plan tab predicts tok/s from the imported benchmarks; the speed-model panel takes the drafter kind
    // from the open draft's architecture.
    connect(m_benchmarksTab, &BenchmarksTab::reportChanged, this,
            [this] { m_planTab->summaryBar()->setBenchmarks(m_benchmarksTab->report()); });
    connect(this, &MainWindow::planChanged, this, [this] {
        const auto plan = m_planController->plan();
        m_benchmarksTab->speedModelPanel()->setArchitectureKind(
            plan ? drafterKindOf(plan->architecture.kind) : std::nullopt,
            plan ? QString::fromStdString(plan->architecture.displayName) : QString());
    });
}

const QuantPlan* MainWindow::currentPlan() const
{
    return m_planController->exportablePlan();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList paths = m_recent->paths();
    for (int i = 0; i < paths.size(); ++i) {
        const QString& path = paths[i];
        // &1..&9, then &0 for the tenth: every entry gets a mnemonic.
        const QString text = tr("&%1 %2").arg(QString::number((i + 1) % 10), QDir::toNativeSeparators(path));
        auto* action = m_recentMenu->addAction(text, this, [this, path] { open(path); });
        action->setToolTip(path);
    }
    if (!paths.isEmpty()) {
        m_recentMenu->addSeparator();
    }
    auto* clear = m_recentMenu->addAction(tr("&Clear List"), m_recent, &RecentFiles::clear);
    clear->setEnabled(!paths.isEmpty());
    m_recentMenu->setEnabled(true);
}

void MainWindow::addTab(const QString& id, QWidget* page, const QString& title)
{
    page->setProperty(kTabIdProperty, id);
    m_tabs->addTab(page, title);
}

bool MainWindow::showTab(const QString& id)
{
    for (int i = 0; i < m_tabs->count(); ++i) {
        if (m_tabs->widget(i)->property(kTabIdProperty).toString() == id) {
            m_tabs->setCurrentIndex(i);
            return true;
        }
    }
    return false;
}

QStringList MainWindow::tabIds() const
{
    QStringList ids;
    for (int i = 0; i < m_tabs->count(); ++i) {
        ids.append(m_tabs->widget(i)->property(kTabIdProperty).toString());
    }
    return ids;
}

bool MainWindow::isOpenablePath(const QString& path)
{
    return isCheckpointPath(path);
}

QString MainWindow::dialogDirectory() const
{
    if (m_currentPath.isEmpty()) {
        return QDir::homePath();
    }
    const QFileInfo info(m_currentPath);
    return info.isDir() ? info.absoluteDir().absolutePath() : info.absolutePath();
}

void MainWindow::openFolder()
{
    const QString folder =
        QFileDialog::getExistingDirectory(this, tr("Open Checkpoint Folder"), dialogDirectory());
    if (!folder.isEmpty()) {
        open(folder);
    }
}

void MainWindow::openFile()
{
    const QString file = QFileDialog::getOpenFileName(
        this, tr("Open Checkpoint File"), dialogDirectory(),
        tr("Checkpoints (*.safetensors *.safetensors.index.json);;All files (*)"));
    if (!file.isEmpty()) {
        open(file);
    }
}

bool MainWindow::openExample()
{
    const auto example = findExampleDraft();
    if (!example) {
        return false;
    }
    m_acceptancePanel->setInputsForDraft(example->draft, example->capture, example->target);
    // Said once the draft is open, in place of "Opened …".
    connect(
        this, &MainWindow::documentLoaded, this,
        [this, draft = example->draft](const QString& path) {
            if (path == draft) {
                statusBar()->showMessage(
                    tr("Example: a trained EAGLE-3 head. Its capture and target model are "
                       "set in the Acceptance tab: Run there, or Score by Acceptance in "
                       "the Budget tab."),
                    15000);
            }
        },
        Qt::SingleShotConnection);
    open(example->draft);
    return true;
}

void MainWindow::open(const QString& path)
{
    if (path.isEmpty() || !confirmPlanEdits()) {
        return;
    }
    statusBar()->showMessage(tr("Opening %1…").arg(QDir::toNativeSeparators(path)));
    setBusy(true);
    m_loader->load(path);
}

void MainWindow::setBusy(bool busy)
{
    m_busy->setVisible(busy);
}

void MainWindow::onLoaded(const QString& path, const std::shared_ptr<const DocumentSnapshot>& snapshot)
{
    setBusy(false);
    m_currentPath = path;
    m_planPath.clear(); // a plan file belongs to the draft it was saved for: Save asks for a name again
    m_document->setSnapshot(snapshot);
    if (m_options.persistState) {
        m_recent->add(path);
    }
    const QString name = QFileInfo(snapshot->sourcePath).fileName();
    setWindowTitle(tr("%1[*] — Sparkulator").arg(name.isEmpty() ? snapshot->sourcePath : name));
    setWindowFilePath(snapshot->sourcePath);
    const int count = static_cast<int>(snapshot->rows.size());
    m_summary->setText(tr("%n tensor(s) · %1 · %2 params · %3", nullptr, count)
                           .arg(localizedBytes(snapshot->totalBytes), formatCount(snapshot->totalParams),
                                snapshot->architectureName.isEmpty() ? snapshot->architectureId
                                                                     : snapshot->architectureName));
    m_summary->setToolTip(snapshot->folder);
    if (snapshot->architectureId == QStringLiteral("generic") && isCapturePath(snapshot->sourcePath)) {
        statusBar()->showMessage(
            tr("%1 is a capture of target hidden states, not a draft: open the draft, then "
               "choose this capture in the Acceptance tab.")
                .arg(QDir::toNativeSeparators(snapshot->sourcePath)));
    } else {
        statusBar()->showMessage(tr("Opened %1").arg(QDir::toNativeSeparators(snapshot->sourcePath)), 5000);
    }
    Q_EMIT documentLoaded(path);
}

void MainWindow::onFailed(const QString& path, const QString& message)
{
    setBusy(false);
    statusBar()->showMessage(tr("Could not open %1").arg(QDir::toNativeSeparators(path)), 5000);
    if (m_options.showErrorDialogs) {
        // Window-modal and non-blocking: the open document stays usable behind it, and tests never hang.
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot Open Checkpoint"),
                                    tr("Sparkulator could not open %1.").arg(QDir::toNativeSeparators(path)),
                                    QMessageBox::Ok, this);
        box->setObjectName(QStringLiteral("openErrorDialog"));
        box->setInformativeText(message);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
    Q_EMIT openFailed(path, message);
}

QString MainWindow::aboutText()
{
    return tr("<h3>Sparkulator %1</h3>"
              "<p>Inspector and quantizer for speculative-decoding draft checkpoints (W4A16, W4A16_ASYM, "
              "W8A16, FP8_DYNAMIC, NVFP4A16, one scheme per module).</p>"
              "<p>Qt %2 (built with %3)<br>QCustomPlot %4</p>")
        .arg(QStringLiteral(SPARK_VERSION), QString::fromLatin1(qVersion()), QStringLiteral(QT_VERSION_STR),
             QStringLiteral(SPARK_QCUSTOMPLOT_VERSION));
}

void MainWindow::showExportDialog()
{
    const QuantPlan* plan = currentPlan();
    const auto snapshot = m_document->snapshot();
    if (!plan || !snapshot || !snapshot->checkpoint) {
        statusBar()->showMessage(tr("Nothing to export: open a checkpoint and fix the plan's errors first."),
                                 8000);
        return;
    }
    // Window-modal and deleted on close: the window stays responsive while the export runs.
    auto* dialog = new ExportDialog(snapshot->checkpoint, *plan, m_benchmarksTab->currentReport(), this);
    dialog->setObjectName(QStringLiteral("exportDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowModality(Qt::WindowModal);
    connect(dialog, &ExportDialog::exportFinished, this, [this](const ExportOutcome& outcome) {
        if (outcome.status == ExportOutcome::Status::Succeeded) {
            statusBar()->showMessage(tr("Exported %1").arg(QDir::toNativeSeparators(outcome.output)), 8000);
            // The next check of an export is a comparison with its source: both are filled in.
            m_compareView->setPaths(m_currentPath, outcome.output);
            m_compareView->clearResult();
        }
    });
    dialog->show();
}

QString MainWindow::askPlanFileName(bool save)
{
    if (m_options.planFileDialog) {
        return m_options.planFileDialog(save);
    }
    const QString filter = tr("Sparkulator plans (*.json);;All files (*)");
    QString start = m_planPath;
    if (start.isEmpty()) {
        const QString name = QFileInfo(m_currentPath).fileName();
        start = QDir(dialogDirectory()).filePath(name.isEmpty() ? tr("plan.json") : name + tr(".plan.json"));
    }
    if (!save) {
        return QFileDialog::getOpenFileName(this, tr("Open Plan"), QFileInfo(start).absolutePath(), filter);
    }
    QString file = QFileDialog::getSaveFileName(this, tr("Save Plan"), start, filter);
    if (!file.isEmpty() && QFileInfo(file).suffix().isEmpty()) {
        file += QStringLiteral(".json");
    }
    return file;
}

void MainWindow::reportPlanFileError(const QString& file, const QString& message)
{
    statusBar()->showMessage(message, 8000);
    if (m_options.showErrorDialogs) {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Plan File"),
                                    tr("Sparkulator could not use the plan file %1.")
                                        .arg(QDir::toNativeSeparators(QFileInfo(file).fileName())),
                                    QMessageBox::Ok, this);
        box->setObjectName(QStringLiteral("planFileErrorDialog"));
        box->setInformativeText(message);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
    Q_EMIT planFileFailed(file, message);
}

bool MainWindow::openPlan(const QString& file)
{
    if (file.isEmpty()) {
        return false;
    }
    const auto snapshot = m_document->snapshot();
    if (!snapshot || !snapshot->checkpoint) {
        statusBar()->showMessage(tr("Open a draft first: a plan file applies to the open draft."), 8000);
        return false;
    }
    PlanOptions options;
    try {
        options = readPlanFile(file.toStdString());
    } catch (const std::exception& e) {
        reportPlanFileError(file, QString::fromStdString(e.what()));
        return false;
    }
    m_planController->loadPlanOptions(options, tr("Open plan %1").arg(QFileInfo(file).fileName()));
    m_planPath = file;
    // A plan made for another draft: its user entries that match nothing here are lint warnings already.
    QStringList unmatched;
    if (const auto plan = m_planController->plan()) {
        for (const auto& finding : plan->lint) {
            if (finding.id.ends_with("-unmatched")) {
                for (const auto& entry : finding.modules) {
                    unmatched.append(QString::fromStdString(entry));
                }
            }
        }
    }
    const QString name = QDir::toNativeSeparators(file);
    statusBar()->showMessage(
        unmatched.isEmpty()
            ? tr("Opened plan %1").arg(name)
            : tr("Opened plan %1: %n entry(s) match nothing in this draft (see the Plan tab's lint): %2",
                 nullptr, static_cast<int>(unmatched.size()))
                  .arg(name, unmatched.join(QStringLiteral(", "))),
        unmatched.isEmpty() ? 5000 : 0);
    return true;
}

bool MainWindow::savePlan(const QString& file)
{
    if (file.isEmpty()) {
        return false;
    }
    try {
        writePlanFile(file.toStdString(), m_planController->planOptions());
    } catch (const std::exception& e) {
        reportPlanFileError(file, QString::fromStdString(e.what()));
        return false;
    }
    m_planPath = file;
    m_planController->markSaved();
    statusBar()->showMessage(tr("Saved plan %1").arg(QDir::toNativeSeparators(file)), 5000);
    return true;
}

void MainWindow::openPlanFile()
{
    openPlan(askPlanFileName(false));
}

bool MainWindow::savePlanFile()
{
    return m_planPath.isEmpty() ? savePlanFileAs() : savePlan(m_planPath);
}

bool MainWindow::savePlanFileAs()
{
    if (!m_document->snapshot()) {
        return false;
    }
    return savePlan(askPlanFileName(true));
}

bool MainWindow::confirmPlanEdits()
{
    if (!m_planController->isModified()) {
        return true;
    }
    UnsavedPlanChoice choice = UnsavedPlanChoice::Discard;
    if (m_options.unsavedPlanPrompt) {
        choice = m_options.unsavedPlanPrompt();
    } else if (m_options.showErrorDialogs) {
        QMessageBox box(
            QMessageBox::Question, tr("Unsaved Plan"),
            tr("The plan of %1 has edits that were not saved.").arg(QFileInfo(m_currentPath).fileName()),
            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, this);
        box.setObjectName(QStringLiteral("unsavedPlanDialog"));
        box.setInformativeText(tr("Save them to a plan file before they are lost?"));
        box.setDefaultButton(QMessageBox::Save);
        const int answer = box.exec();
        choice = answer == QMessageBox::Save      ? UnsavedPlanChoice::Save
                 : answer == QMessageBox::Discard ? UnsavedPlanChoice::Discard
                                                  : UnsavedPlanChoice::Cancel;
    }
    switch (choice) {
    case UnsavedPlanChoice::Save:
        return savePlanFile();
    case UnsavedPlanChoice::Discard:
        return true;
    case UnsavedPlanChoice::Cancel:
        break;
    }
    return false;
}

void MainWindow::fitStatusMessage(const QString& message)
{
    if (message.isEmpty()) {
        m_summary->show();
        return;
    }
    // QStatusBar draws its message in what the permanent widgets leave: give it the whole bar when needed.
    const QFontMetrics metrics = statusBar()->fontMetrics();
    const int margins = metrics.averageCharWidth() * 6;
    int available = width() - margins - m_summary->sizeHint().width();
    if (m_busy->isVisibleTo(this)) {
        available -= m_busy->sizeHint().width();
    }
    m_summary->setVisible(metrics.horizontalAdvance(message) <= available);
}

void MainWindow::showAbout()
{
    QMessageBox::about(this, tr("About Sparkulator"), aboutText());
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (!confirmPlanEdits()) {
        event->ignore();
        return;
    }
    if (m_options.persistState) {
        QSettings settings;
        settings.setValue(settingsKey("geometry"), saveGeometry());
        settings.setValue(settingsKey("state"), saveState());
        settings.setValue(settingsKey("tensorsView"), m_tensorsView->saveState());
    }
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (isOpenablePath(droppedLocalPath(event->mimeData()))) {
        event->acceptProposedAction();
    } else {
        event->ignore();
    }
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QString path = droppedLocalPath(event->mimeData());
    if (!isOpenablePath(path)) {
        event->ignore();
        return;
    }
    event->acceptProposedAction();
    open(path);
}

} // namespace spark
