#pragma once

#include "core/bench/benchrecord.h"
#include "core/bench/benchreport.h"
#include "views/bench/benchplot.h"

#include <QStringList>
#include <QUrl>
#include <QWidget>
#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QLineEdit;
class QLabel;
class QListWidget;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QSplitter;
class QTabWidget;
class QTableView;

namespace spark {

class ElidingLabel;

class BenchImporter;
class BenchKey;
class BenchPlotWidget;
class BenchTableModel;
class SpeedModelPanel;

/// @brief The "Benchmarks" tab: imports vLLM results, /metrics scrapes, CSV, server logs and
/// llama-bench JSON by dialog or drag and drop, shows the per-cell statistics against a chosen baseline
/// arm, the warnings (an acceptance collapse as a banner) and the four plots. Imports accumulate until
/// cleared; every statistic comes from core's buildBenchReport(). The speed-model panel predicts tok/s
/// against k from a drafter time.
class BenchmarksTab : public QWidget
{
    Q_OBJECT

  public:
    explicit BenchmarksTab(QWidget* parent = nullptr);
    ~BenchmarksTab() override;

    /// @brief The report on screen with the speed-model panel's model, or nullopt before anything was
    /// imported (the export dialog attaches it to the model card).
    std::optional<BenchReport> currentReport() const;
    std::shared_ptr<const BenchReport> report() const { return m_report; }
    /// @brief The files imported so far, in import order.
    QStringList importedFiles() const { return m_files; }
    /// @brief A /metrics scrape imported on its own, held as "before" until the "after" scrape comes.
    QString pendingScrape() const { return m_pendingScrape; }
    bool isImporting() const;

    /// @brief The baseline as chosen by the user; empty: core's default (an arm named *bf16*, else the
    /// first).
    QString baselineArm() const { return m_baseline; }
    /// @brief The report's tables as GitHub Markdown (what Copy as Markdown puts on the clipboard).
    QString markdown() const;

    BenchTableModel* tableModel() const { return m_model; }
    QSortFilterProxyModel* proxyModel() const { return m_proxy; }
    QTableView* tableView() const { return m_table; }
    QListWidget* warningsList() const { return m_warnings; }
    QComboBox* baselineSelector() const { return m_baselineBox; }
    /// @brief The tags given to the next imports (arm, prompt length, override), like the CLI's --arm,
    /// --prompt-len and --override-tags: for /metrics pairs and CSV files that carry none.
    RecordTags importTags() const;
    void setImportTags(const RecordTags& tags);
    /// @brief The acceptance-collapse banner (hidden unless an arm collapsed).
    QLabel* collapseBanner() const { return m_banner; }
    /// @brief The last import error shown, or empty.
    QString importError() const;
    BenchPlotWidget* plot(BenchPlotKind kind) const;
    BenchKey* plotKey() const { return m_key; }
    SpeedModelPanel* speedModelPanel() const { return m_speedPanel; }
    /// @brief Table, warnings, and the plots/speed-model pages, top to bottom.
    QSplitter* splitter() const { return m_splitter; }
    /// @brief The "Plots" and "Speed model" pages under the table.
    QTabWidget* viewTabs() const { return m_views; }

    /// @brief True when every URL is a local file (what drops and the Import dialog accept).
    static bool acceptsUrls(const QList<QUrl>& urls);

  public Q_SLOTS:
    /// @brief Imports @p paths in the order given, added to what is already imported (the path that the
    /// Import dialog and drag and drop take). Files imported before are skipped. Emits reportChanged or
    /// importFailed.
    void importFiles(const QStringList& paths);
    void importWithDialog();
    /// @brief Forgets every import.
    void clear();
    /// @brief Compares against @p arm (empty: core's default).
    void setBaselineArm(const QString& arm);
    /// @brief Puts markdown() on the clipboard.
    void copyMarkdown();

  Q_SIGNALS:
    /// The report (or its absence after clear()) changed.
    void reportChanged();
    /// @p message names the file and, where one applies, the line; earlier imports stay.
    void importFailed(const QString& message);

  protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

  private:
    void onImported(const QStringList& paths, const BenchImport& result);
    void onFailed(const QStringList& paths, const QString& message);
    void rebuildReport();
    void updateBaselineSelector();
    void updateWarnings();
    void showError(const QString& message);
    /// Gives the table the height of its rows and the warnings theirs (at most a few lines), the plots
    /// the rest, until the user moves a handle.
    void fitSplitter();

    BenchImporter* m_importer;
    BenchImport m_import;
    QStringList m_files;
    QString m_pendingScrape;
    QString m_baseline;
    std::shared_ptr<const BenchReport> m_report;
    QString m_lastDirectory;

    BenchTableModel* m_model;
    QSortFilterProxyModel* m_proxy;
    QPushButton* m_clear;
    QPushButton* m_copy;
    QComboBox* m_baselineBox;
    QLineEdit* m_armTag;
    QSpinBox* m_promptLenTag;
    QCheckBox* m_overrideTags;
    ElidingLabel* m_status; ///< one line, elided with the full text as tooltip in a narrow window
    QLabel* m_banner;
    QLabel* m_error;
    QLabel* m_hint;
    QTableView* m_table;
    QListWidget* m_warnings;
    QList<BenchPlotWidget*> m_plots;
    BenchKey* m_key; ///< what the plots' colours and line styles mean, once for all four
    SpeedModelPanel* m_speedPanel;
    QSplitter* m_splitter = nullptr;
    QTabWidget* m_views = nullptr; ///< "Plots" and "Speed model"
    bool m_userSizedSplitter = false;
};

} // namespace spark
