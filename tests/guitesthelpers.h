#pragma once
// Helpers shared by the tst_gui_*.cpp tests (header-only; each test is its own executable): main window
// options that keep a test away from the user's settings, and waits for the work the GUI does in the
// background (opening a draft, analysis, benchmark imports), so that a test checks the finished state.

#include "core/demo/demodraft.h"
#include "testsupport.h"
#include "views/analysis/analysiscontroller.h"
#include "views/analysis/analysispanel.h"
#include "views/bench/benchmarkstab.h"
#include "views/window/mainwindow.h"

#include <QSignalSpy>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <filesystem>
#include <string>

namespace spark::test {

/// Writes the tiny demo of architecture @p arch as folder @p name of @p dir and returns its path: the
/// drafts the GUI tests open are made fresh, never read from the source tree.
inline QString writeTinyDemo(const QTemporaryDir& dir, const char* arch, const QString& name)
{
    const QString path = dir.filePath(name);
    writeDemoDraft(describeDemoDraft(arch, DemoScale::Tiny), path.toStdString(), {});
    return path;
}

/// Options for a window under test: the user's settings stay untouched (no saved geometry, view state or
/// recent files read or written), while errors still show in message boxes, as a user would see them.
inline MainWindowOptions noSavedState()
{
    MainWindowOptions options;
    options.persistState = false;
    return options;
}

/// noSavedState() without error message boxes: a modal box would wait for a click that never comes; the
/// failures still arrive through the window's signals and status bar.
inline MainWindowOptions quiet()
{
    MainWindowOptions options = noSavedState();
    options.showErrorDialogs = false;
    return options;
}

/// Opens @p path through the slot the File menu uses and waits for the document: loading runs on a worker
/// thread. False when none arrived within @p timeoutMs (a failed open emits openFailed instead).
inline bool openAndWait(MainWindow& window, const QString& path, int timeoutMs = 30000)
{
    QSignalSpy loaded(&window, &MainWindow::documentLoaded);
    window.open(path);
    return loaded.wait(timeoutMs);
}

/// The same for a folder the std::filesystem side wrote (the audit helpers' demo drafts and exports).
inline bool openAndWait(MainWindow& window, const std::filesystem::path& path, int timeoutMs = 30000)
{
    return openAndWait(window, QString::fromStdString(path.string()), timeoutMs);
}

/// Runs the analysis (F5) and waits for it (a background job, up to two minutes); true only when it finished
/// rather than being cancelled.
inline bool analyzeAndWait(MainWindow& window)
{
    QSignalSpy finished(window.analysisController(), &AnalysisController::finished);
    window.analysisPanel()->analyze();
    return finished.wait(120000) && !finished.front().front().toBool();
}

/// A benchmark sample under tests/data/bench, as the Benchmarks tab takes it.
inline QString benchSample(const char* name)
{
    return QString::fromStdString(dataPath(std::string("bench/") + name).string());
}

/// Imports @p paths through the slot that drag and drop and the Import dialog use and waits for the report:
/// files are read in the background.
inline bool importAndWait(BenchmarksTab& tab, const QStringList& paths)
{
    QSignalSpy changed(&tab, &BenchmarksTab::reportChanged);
    tab.importFiles(paths);
    return changed.wait(30000);
}

} // namespace spark::test
