#include "views/window/screenshot.h"

#include "views/analysis/analysispanel.h"
#include "views/tensors/tensorsview.h"
#include "views/window/mainwindow.h"

#include <QApplication>
#include <QEventLoop>
#include <QFileInfo>
#include <QImageWriter>
#include <QPixmap>
#include <QTimer>

namespace spark {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 2;

} // namespace

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
    window.resize(window.preferredSize());
    window.show();

    QEventLoop loop;
    bool loaded = false;
    QString failure;
    QObject::connect(&window, &MainWindow::documentLoaded, &loop, [&] {
        loaded = true;
        loop.quit();
    });
    QObject::connect(&window, &MainWindow::openFailed, &loop, [&](const QString&, const QString& message) {
        failure = message;
        loop.quit();
    });
    QTimer::singleShot(request.timeoutMs, &loop, &QEventLoop::quit);
    window.open(request.checkpoint);
    loop.exec();
    if (!loaded) {
        *error = failure.isEmpty()
                     ? QApplication::translate("spark::Screenshot", "%1: timed out while opening")
                           .arg(request.checkpoint)
                     : failure;
        return kExitError;
    }

    if (request.analyze) {
        QEventLoop analysisLoop;
        bool completed = false;
        QObject::connect(window.analysisPanel(), &AnalysisPanel::finished, &analysisLoop,
                         [&](bool cancelled) {
                             completed = !cancelled;
                             analysisLoop.quit();
                         });
        QTimer::singleShot(request.timeoutMs, &analysisLoop, &QEventLoop::quit);
        window.analysisPanel()->analyze();
        if (window.analysisPanel()->isRunning()) {
            analysisLoop.exec();
        } else {
            completed = true; // nothing to analyze
        }
        if (!completed) {
            *error = QApplication::translate("spark::Screenshot", "%1: analysis did not finish in time")
                         .arg(request.checkpoint);
            return kExitError;
        }
    }

    window.showTab(request.tab);
    if (!request.select.isEmpty() && !window.tensorsView()->selectTensor(request.select)) {
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
