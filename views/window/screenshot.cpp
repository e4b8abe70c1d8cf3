#include "views/window/screenshot.h"

#include "views/analysis/analysispanel.h"
#include "views/bench/benchmarkstab.h"
#include "views/shared/theme.h"
#include "views/tensors/tensorsview.h"
#include "views/window/mainwindow.h"

#include <QApplication>
#include <QEventLoop>
#include <QFileInfo>
#include <QImageWriter>
#include <QPixmap>
#include <QRegularExpression>
#include <QTimer>

namespace spark {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 2;

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

    if (!request.bench.isEmpty()) {
        BenchmarksTab* bench = window.benchmarksTab();
        QEventLoop importLoop;
        bool imported = false;
        QString importError;
        QObject::connect(bench, &BenchmarksTab::reportChanged, &importLoop, [&] {
            imported = true;
            importLoop.quit();
        });
        QObject::connect(bench, &BenchmarksTab::importFailed, &importLoop, [&](const QString& message) {
            importError = message;
            importLoop.quit();
        });
        QTimer::singleShot(request.timeoutMs, &importLoop, &QEventLoop::quit);
        bench->importFiles(request.bench);
        if (bench->isImporting()) {
            importLoop.exec();
        }
        if (!imported) {
            *error = importError.isEmpty()
                         ? QApplication::translate("spark::Screenshot", "benchmark import did not finish")
                         : importError;
            return kExitError;
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
