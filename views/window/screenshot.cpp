#include "views/window/screenshot.h"

#include "views/acceptance/acceptancepanel.h"
#include "views/acceptance/acceptancerunner.h"
#include "views/analysis/analysiscontroller.h"
#include "views/analysis/analysispanel.h"
#include "views/bench/benchmarkstab.h"
#include "views/compare/compareview.h"
#include "views/plan/budgetpanel.h"
#include "views/plan/plancontroller.h"
#include "views/plan/sweepjob.h"
#include "views/shared/theme.h"
#include "views/tensors/tensorsview.h"
#include "views/window/mainwindow.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QImageWriter>
#include <QLineEdit>
#include <QPixmap>
#include <QPushButton>
#include <QRegularExpression>
#include <QSlider>
#include <QThread>
#include <QTimer>

namespace spark {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 2;

/// @brief Waits in an event loop for one background job (open, analyze, sweep, compare, import) that
/// reports through a signal: connect the signal to done() or fail() with context() as the receiver.
class JobWait
{
  public:
    QEventLoop* context() { return &m_loop; }
    void done() { finish(true); }
    void fail() { finish(false); }
    /// @return true when done() was called, now or within @p timeoutMs.
    bool wait(int timeoutMs)
    {
        if (!m_finished) {
            QTimer::singleShot(timeoutMs, &m_loop, &QEventLoop::quit);
            m_loop.exec();
        }
        return m_succeeded;
    }

  private:
    void finish(bool succeeded)
    {
        m_finished = true;
        m_succeeded = succeeded;
        m_loop.quit();
    }

    QEventLoop m_loop;
    bool m_finished = false;
    bool m_succeeded = false;
};

/// @brief Processes events until @p ready() holds or @p timeoutMs pass: for jobs whose end shows in the
/// widgets (the Budget tab's buttons come back when scoring or measuring ends).
template <typename Ready> bool waitUntil(Ready ready, int timeoutMs)
{
    QElapsedTimer clock;
    clock.start();
    while (!ready()) {
        if (clock.elapsed() > timeoutMs) {
            return false;
        }
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        QThread::msleep(5);
    }
    return true;
}

} // namespace

QSize parseScreenshotSize(const QString& text)
{
    static const QRegularExpression pattern(QStringLiteral("^(\\d{2,5})[xX](\\d{2,5})$"));
    const auto match = pattern.match(text.trimmed());
    return match.hasMatch() ? QSize(match.captured(1).toInt(), match.captured(2).toInt()) : QSize();
}

int renderScreenshot(const ScreenshotRequest& request, QString* error)
{
    if (request.output.isEmpty()) {
        *error = QApplication::translate("spark::Screenshot", "--screenshot needs an output file name");
        return kExitError;
    }
    if (request.checkpoint.isEmpty()) {
        *error = QApplication::translate("spark::Screenshot", "--screenshot needs a checkpoint to open");
        return kExitError;
    }
    if (!request.theme.isEmpty()) {
        const auto theme = themeFromName(request.theme);
        if (!theme) {
            *error = QApplication::translate("spark::Screenshot", "unknown theme '%1' (light, dark, system)")
                         .arg(request.theme);
            return kExitError;
        }
        applyTheme(*theme);
    }
    for (const auto& file : request.bench) {
        if (!QFileInfo(file).isFile()) {
            *error = QApplication::translate("spark::Screenshot", "%1: no such benchmark file").arg(file);
            return kExitError;
        }
    }
    MainWindowOptions options;
    options.persistState = false;
    options.showErrorDialogs = false;
    MainWindow window(options);
    if (!window.tabIds().contains(request.tab)) {
        *error = QApplication::translate("spark::Screenshot", "unknown tab '%1' (available: %2)")
                     .arg(request.tab, window.tabIds().join(QStringLiteral(", ")));
        return kExitError;
    }
    // The offscreen screen is small; the picture should show the window at the size a desktop would.
    window.resize(request.size.isValid() ? request.size : window.preferredSize());
    window.show();

    JobWait opening;
    QString failure;
    QObject::connect(&window, &MainWindow::documentLoaded, opening.context(), [&] { opening.done(); });
    QObject::connect(&window, &MainWindow::openFailed, opening.context(),
                     [&](const QString&, const QString& message) {
                         failure = message;
                         opening.fail();
                     });
    window.open(request.checkpoint);
    if (!opening.wait(request.timeoutMs)) {
        *error = failure.isEmpty()
                     ? QApplication::translate("spark::Screenshot", "%1: timed out while opening")
                           .arg(request.checkpoint)
                     : failure;
        return kExitError;
    }

    if (request.analyze) {
        JobWait analysis;
        QObject::connect(window.analysisController(), &AnalysisController::finished, analysis.context(),
                         [&](bool cancelled) { cancelled ? analysis.fail() : analysis.done(); });
        window.analysisPanel()->analyze();
        if (window.analysisController()->isRunning() && !analysis.wait(request.timeoutMs)) {
            *error = QApplication::translate("spark::Screenshot", "%1: analysis did not finish in time")
                         .arg(request.checkpoint);
            return kExitError;
        }
    }

    if (request.sweep) {
        BudgetPanel* budget = window.budgetPanel();
        JobWait sweep;
        QString sweepError;
        QObject::connect(budget->sweepJob(), &SweepJob::finished, sweep.context(),
                         [&](const SweepJobResult& result) {
                             sweepError = result.error;
                             result.sweep ? sweep.done() : sweep.fail();
                         });
        budget->startSweep();
        if (!budget->sweepJob()->isRunning() || !sweep.wait(request.timeoutMs)) {
            *error = QApplication::translate("spark::Screenshot", "%1: the sweep did not finish%2")
                         .arg(request.checkpoint,
                              sweepError.isEmpty() ? QString() : QStringLiteral(": ") + sweepError);
            return kExitError;
        }
    }

    if (request.score) {
        if (request.acceptanceCapture.isEmpty()) {
            *error = QApplication::translate("spark::Screenshot", "--score needs --acceptance CAPTURE");
            return kExitError;
        }
        auto* acceptance = window.findChild<AcceptancePanel*>();
        acceptance->captureEdit()->setText(request.acceptanceCapture);
        acceptance->targetEdit()->setText(request.acceptanceTarget);
        BudgetPanel* budget = window.budgetPanel();
        budget->startScoring();
        if (!waitUntil([&] { return budget->scoreButton()->isEnabled(); }, request.timeoutMs) ||
            !budget->scores()) {
            *error =
                QApplication::translate("spark::Screenshot", "%1: scoring by acceptance did not finish: %2")
                    .arg(request.acceptanceCapture, budget->summaryText());
            return kExitError;
        }
    }

    if (request.budgetPoint >= 0) {
        QSlider* slider = window.budgetPanel()->budgetSlider();
        if (!(request.sweep || request.score) || request.budgetPoint > 1 || !slider->isEnabled()) {
            *error = QApplication::translate(
                "spark::Screenshot",
                "--budget-point takes a fraction from 0 to 1 and needs --sweep or --score");
            return kExitError;
        }
        // From the plan as it is, so that the "what changed" table lists what the budget changes in it; a
        // slider already at the point moves away first (setting the same value applies nothing).
        const int value =
            slider->minimum() + qRound(request.budgetPoint * (slider->maximum() - slider->minimum()));
        if (slider->value() == value) {
            slider->setValue(value == slider->minimum() ? slider->maximum() : slider->minimum());
        }
        slider->setValue(value);
        window.planController()->recomputeNow();
        if (request.score) {
            BudgetPanel* budget = window.budgetPanel();
            budget->startMeasuring();
            if (!waitUntil([&] { return budget->scoreButton()->isEnabled(); }, request.timeoutMs) ||
                !budget->measurement()) {
                *error = QApplication::translate("spark::Screenshot", "%1: the plan could not be measured")
                             .arg(request.acceptanceCapture);
                return kExitError;
            }
        }
    }

    if (!request.compareWith.isEmpty()) {
        CompareView* compare = window.compareView();
        JobWait comparing;
        QObject::connect(compare, &CompareView::finished, comparing.context(),
                         [&] { compare->report() ? comparing.done() : comparing.fail(); });
        compare->setPaths(request.checkpoint, request.compareWith);
        compare->startCompare();
        if (!comparing.wait(request.timeoutMs)) {
            *error = compare->isRunning()
                         ? QApplication::translate("spark::Screenshot",
                                                   "%1: the comparison did not finish in time")
                               .arg(request.compareWith)
                         : compare->statusText();
            return kExitError;
        }
    }

    if (!request.bench.isEmpty()) {
        BenchmarksTab* bench = window.benchmarksTab();
        JobWait importing;
        QString importError;
        QObject::connect(bench, &BenchmarksTab::reportChanged, importing.context(),
                         [&] { importing.done(); });
        QObject::connect(bench, &BenchmarksTab::importFailed, importing.context(),
                         [&](const QString& message) {
                             importError = message;
                             importing.fail();
                         });
        bench->importFiles(request.bench);
        if (!importing.wait(request.timeoutMs)) {
            *error = importError.isEmpty()
                         ? QApplication::translate("spark::Screenshot", "benchmark import did not finish")
                         : importError;
            return kExitError;
        }
    }

    if (!request.acceptanceCapture.isEmpty() && !request.score) {
        auto* acceptance = window.findChild<AcceptancePanel*>();
        acceptance->captureEdit()->setText(request.acceptanceCapture);
        acceptance->targetEdit()->setText(request.acceptanceTarget);
        // The acceptance run, then the per-unit sensitivity: the tab with both tables filled.
        for (const bool sensitivity : {false, true}) {
            JobWait running;
            QString runError;
            QObject::connect(acceptance->runner(), &AcceptanceRunner::finished, running.context(),
                             [&](const AcceptanceJobResult& result) {
                                 runError = result.error;
                                 result.run || result.units ? running.done() : running.fail();
                             });
            sensitivity ? acceptance->startSensitivity() : acceptance->startRun();
            if (!acceptance->runner()->isRunning() || !running.wait(request.timeoutMs)) {
                *error =
                    QApplication::translate("spark::Screenshot", "%1: the acceptance run did not finish: %2")
                        .arg(request.acceptanceCapture,
                             runError.isEmpty() ? acceptance->statusText() : runError);
                return kExitError;
            }
        }
    }

    window.showTab(request.tab);
    if (!request.select.isEmpty() && !window.tensorsView()->selectTensor(request.select) &&
        !window.tensorsView()->selectNode(request.select)) {
        *error = QApplication::translate("spark::Screenshot", "%1: no tensor named '%2'")
                     .arg(request.checkpoint, request.select);
        return kExitError;
    }
    // Let layouts, the tree's delayed item layout and queued replots settle before grabbing.
    QApplication::processEvents();
    QApplication::sendPostedEvents();
    QApplication::processEvents();

    const QPixmap pixmap = window.grab();
    QImageWriter writer(request.output, "png");
    if (pixmap.isNull() || !writer.write(pixmap.toImage())) {
        *error = QApplication::translate("spark::Screenshot", "%1: cannot write PNG: %2")
                     .arg(QFileInfo(request.output).absoluteFilePath(), writer.errorString());
        return kExitError;
    }
    return kExitOk;
}

} // namespace spark
