#pragma once

#include <QSize>
#include <QString>
#include <QStringList>

namespace spark {

/// @brief What `sparkulator --screenshot` renders.
struct ScreenshotRequest
{
    QString checkpoint;                      ///< folder, .safetensors or index to open
    QString output;                          ///< PNG to write
    QString tab = QStringLiteral("tensors"); ///< tab id to show
    QString select;                          ///< tensor (or module/layer row) to select, or empty
    bool analyze = false;                    ///< run analyze (F5) and wait for it before grabbing
    bool sweep = false;                      ///< run the Budget tab's sweep and wait for it
    /// Score the draft by acceptance in the Budget tab (on acceptanceCapture) instead of running the
    /// Acceptance tab; with budgetPoint, that point's plan is then measured on the held-out samples.
    bool score = false;
    /// After the sweep or the scoring, move the Budget tab's slider to this fraction of its range (0: the
    /// smallest plan, 1: the most accurate) and apply that plan; a negative value leaves the plan alone.
    double budgetPoint = -1;
    QString compareWith; ///< a quantized output to compare the checkpoint with
    QString theme;       ///< "light" or "dark" (View ▸ Theme); empty: the system's
    QSize size;          ///< window size; empty: MainWindow::preferredSize()
    QStringList bench;   ///< benchmark files to import into the Benchmarks tab
    /// A capture to run the Acceptance tab on (the Plan tab's plan against BF16, then the per-unit
    /// sensitivity), or empty; acceptanceTarget is its target checkpoint when the draft needs one.
    QString acceptanceCapture;
    QString acceptanceTarget;
    int timeoutMs = 120000; ///< give up when loading takes longer
};

/// @brief Parses "1200x700" (a window size for --size). @return an invalid size when malformed.
QSize parseScreenshotSize(const QString& text);

/// @brief Opens the checkpoint in a fresh main window (no settings read or written, no dialogs) in the
/// requested theme and size, waits for it to load through the same path as File ▸ Open, optionally runs
/// analyze, the sweep and a comparison to completion and imports benchmark files, shows the tab, selects the
/// tensor and saves QWidget::grab() as PNG. Needs a QApplication; the caller picks the platform (offscreen
/// for headless).
/// @return 0 on success; 2 with @p error set (naming the file or the bad argument) otherwise.
int renderScreenshot(const ScreenshotRequest& request, QString* error);

} // namespace spark
