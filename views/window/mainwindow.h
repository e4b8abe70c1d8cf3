#pragma once

#include <QMainWindow>
#include <functional>
#include <memory>

class QAction;
class QLabel;
class QMenu;
class QProgressBar;
class QTabWidget;

namespace spark {

class AcceptancePanel;
class AnalysisController;
class AnalysisPanel;
class BenchmarksTab;
class BudgetPanel;
class CompareView;
class TensorSweepSection;
class PlanController;
class PlanTab;
struct QuantPlan;
class TensorErrorSection;
class StoredWeightSection;
class TensorPlanSection;

class CheckpointLoader;
class Document;
struct DocumentSnapshot;
class RecentFiles;
class TensorsView;

/// @brief What to do with plan edits that were not saved, before they are lost (another draft, quitting).
enum class UnsavedPlanChoice { Save, Discard, Cancel };

/// @brief How a main window behaves beyond its defaults. Screenshots and tests turn persistence and
/// dialogs off so that they neither read nor change the user's settings and never block.
struct MainWindowOptions
{
    bool persistState = true;     ///< restore/save geometry and view state, record recent files
    bool showErrorDialogs = true; ///< report open failures in a message box (besides openFailed)
    /// Asks what to do with unsaved plan edits. Unset: a Save/Discard/Cancel message box when
    /// showErrorDialogs is on, else Discard (a quiet window never blocks). Tests answer through it.
    std::function<UnsavedPlanChoice()> unsavedPlanPrompt;
    /// Asks for a plan file name (@p save: to write, else to read); empty for none. Unset: a file dialog.
    std::function<QString(bool save)> planFileDialog;
};

/// @brief The Sparkulator main window: a thin shell over core. It owns the Document and the tabs; every
/// tab gets the same Document and registers under an id ("tensors", later "plan", "benchmarks").
class MainWindow : public QMainWindow
{
    Q_OBJECT

  public:
    explicit MainWindow(QWidget* parent = nullptr);
    explicit MainWindow(const MainWindowOptions& options, QWidget* parent = nullptr);
    ~MainWindow() override;

    Document* document() const { return m_document; }
    TensorsView* tensorsView() const { return m_tensorsView; }
    QTabWidget* tabs() const { return m_tabs; }
    RecentFiles* recentFiles() const { return m_recent; }
    PlanController* planController() const { return m_planController; }
    PlanTab* planTab() const { return m_planTab; }
    AnalysisPanel* analysisPanel() const { return m_analysis; }
    AnalysisController* analysisController() const { return m_analysisController; }
    TensorPlanSection* tensorPlanSection() const { return m_planSection; }
    TensorErrorSection* tensorErrorSection() const { return m_errorSection; }
    StoredWeightSection* storedWeightSection() const { return m_storedSection; }
    BenchmarksTab* benchmarksTab() const { return m_benchmarksTab; }
    /// @brief The "Budget" tab: sensitivity sweep, exact Pareto frontier and budget slider.
    BudgetPanel* budgetPanel() const { return m_budgetPanel; }
    TensorSweepSection* tensorSweepSection() const { return m_sweepSection; }
    /// @brief The "Acceptance" tab: offline acceptance of the open draft on a capture.
    AcceptancePanel* acceptancePanel() const { return m_acceptancePanel; }
    /// @brief File ▸ Open Example: disabled when no example is installed (findExampleDraft()).
    QAction* openExampleAction() const { return m_openExampleAction; }
    /// @brief The "Compare" tab: a source against a quantized output of it.
    CompareView* compareView() const { return m_compareView; }
    /// @brief File ▸ Export… (Ctrl+E): enabled while currentPlan() is non-null.
    QAction* exportAction() const { return m_exportAction; }
    /// @brief The plan an export may use: nullptr when nothing is open, the plan has errors (an invalid
    /// regex, a split fused group), or an edit is still waiting to be planned.
    const QuantPlan* currentPlan() const;
    /// @brief File ▸ Save Plan (Ctrl+S) and File ▸ Open Plan…: enabled while a draft is open.
    QAction* savePlanAction() const { return m_savePlanAction; }
    QAction* openPlanAction() const { return m_openPlanAction; }
    /// @brief The plan file last saved or opened for the open draft, or empty.
    QString planPath() const { return m_planPath; }
    /// @brief Reads plan file @p file (core/plan/planfile.h) into the plan editor as one undoable edit.
    /// Reports entries that match nothing in this draft in the status bar; an unreadable file in a message
    /// box (when dialogs are on) and planFileFailed. @return false when nothing was applied.
    bool openPlan(const QString& file);
    /// @brief Writes the current plan edits to plan file @p file and marks them saved. @return success.
    bool savePlan(const QString& file);
    /// @brief When the plan has unsaved edits, asks to save, discard or cancel (unsavedPlanPrompt).
    /// @return true when the caller may go on (saved, discarded or nothing to save).
    bool confirmPlanEdits();

    /// @brief The path of the open document as the user gave it, or empty.
    QString currentPath() const { return m_currentPath; }

    /// @brief Adds a tab under @p id (lower case, used by --tab).
    void addTab(const QString& id, QWidget* page, const QString& title);
    /// @brief Makes the tab @p id current. @return false when there is no such tab.
    bool showTab(const QString& id);
    QStringList tabIds() const;

    /// @brief The size a new window would like, in text units so that it scales with the font and DPI.
    QSize preferredSize() const;

    /// @brief True for what File ▸ Open and drag and drop accept: a folder, a .safetensors file or an index.
    static bool isOpenablePath(const QString& path);
    /// @brief The About box text: Sparkulator, Qt (build and runtime) and QCustomPlot versions.
    static QString aboutText();

  public Q_SLOTS:
    /// @brief Opens @p path (folder, .safetensors or index) in the background, like File ▸ Open. Emits
    /// documentLoaded or openFailed; an open started later wins over one still running.
    void open(const QString& path);
    void openFolder();
    void openFile();
    /// @brief Opens the trained example draft with its capture and target model filled in (the Acceptance
    /// and Budget tabs read them). @return false when no example is installed.
    bool openExample();
    void showAbout();
    /// @brief Opens the export dialog for the open checkpoint and currentPlan(), attaching the
    /// Benchmarks tab's report to the model card when there is one.
    void showExportDialog();
    /// @brief File ▸ Open Plan…: asks for a plan file and opens it.
    void openPlanFile();
    /// @brief File ▸ Save Plan: saves to planPath(), or asks for a name first. @return success.
    bool savePlanFile();
    /// @brief File ▸ Save Plan As…: asks for a name and saves. @return success.
    bool savePlanFileAs();

  Q_SIGNALS:
    void documentLoaded(const QString& path);
    /// @p message names the file and the problem. The previous document stays open.
    void openFailed(const QString& path, const QString& message);
    /// The plan changed (an edit, undo/redo, a new scheme or document); currentPlan() has the new one.
    void planChanged();
    /// A plan file could not be read or written; @p message names the file and the problem.
    void planFileFailed(const QString& file, const QString& message);

  protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

  private:
    void createActions();
    void createAnalysisAndPlan();
    void connectSpeedModel();
    void createBudget();
    void rebuildRecentMenu();
    void onLoaded(const QString& path, const std::shared_ptr<const DocumentSnapshot>& snapshot);
    void onFailed(const QString& path, const QString& message);
    void setBusy(bool busy);
    QString dialogDirectory() const;
    QString askPlanFileName(bool save);
    void reportPlanFileError(const QString& file, const QString& message);
    // Hides the permanent summary while a status message would not fit beside it.
    void fitStatusMessage(const QString& message);

    MainWindowOptions m_options;
    Document* m_document;
    CheckpointLoader* m_loader;
    RecentFiles* m_recent;
    QTabWidget* m_tabs;
    TensorsView* m_tensorsView;
    QMenu* m_recentMenu = nullptr;
    QLabel* m_summary = nullptr;
    QProgressBar* m_busy = nullptr;
    QString m_currentPath;
    PlanController* m_planController = nullptr;
    PlanTab* m_planTab = nullptr;
    AnalysisController* m_analysisController = nullptr;
    AnalysisPanel* m_analysis = nullptr;
    TensorPlanSection* m_planSection = nullptr;
    TensorErrorSection* m_errorSection = nullptr;
    StoredWeightSection* m_storedSection = nullptr;
    BenchmarksTab* m_benchmarksTab = nullptr;
    QAction* m_exportAction = nullptr;
    QAction* m_savePlanAction = nullptr;
    QAction* m_openPlanAction = nullptr;
    QString m_planPath;
    BudgetPanel* m_budgetPanel = nullptr;
    AcceptancePanel* m_acceptancePanel = nullptr;
    QAction* m_openExampleAction = nullptr;
    CompareView* m_compareView = nullptr;
    TensorSweepSection* m_sweepSection = nullptr;
};

} // namespace spark
