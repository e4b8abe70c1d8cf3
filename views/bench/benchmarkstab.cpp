#include "views/bench/benchmarkstab.h"

#include "core/bench/benchimport.h"
#include "core/bench/benchreportformat.h"
#include "views/bench/benchimporter.h"
#include "views/bench/benchkey.h"
#include "views/bench/benchplotwidget.h"
#include "views/bench/benchtablemodel.h"
#include "views/bench/speedmodelpanel.h"
#include "views/shared/elidinglabel.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMimeData>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollArea>
#include <QScrollBar>
#include <QSet>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <map>

namespace spark {

namespace {

bool isPrometheusScrape(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        return false; // the importer reports the unreadable file with its name
    }
    const QByteArray head = file.read(64 * 1024);
    return detectBenchFileKind(path.toStdString(), std::string_view(head.constData(), head.size())) ==
           BenchFileKind::PrometheusText;
}

QString canonical(const QString& path)
{
    const QFileInfo info(path);
    const QString resolved = info.canonicalFilePath();
    return resolved.isEmpty() ? info.absoluteFilePath() : resolved;
}

// Lays four plots out in one row when each gets BenchPlotWidget::kMinimumWidth, else 2×2, else in one
// column; the scroll area around it scrolls what the window's height does not hold.
class PlotGrid : public QWidget
{
  public:
    explicit PlotGrid(QWidget* parent) : QWidget(parent), m_grid(new QGridLayout(this))
    {
        m_grid->setContentsMargins(0, 0, 0, 0);
    }

    void addPlot(QWidget* plot)
    {
        m_plots.append(plot);
        arrange(true);
    }

    int columns() const { return m_columns; }

  protected:
    void resizeEvent(QResizeEvent* event) override
    {
        QWidget::resizeEvent(event);
        arrange(false);
    }

  private:
    void arrange(bool force)
    {
        const auto fits = [this](int columns) {
            return columns * BenchPlotWidget::kMinimumWidth + (columns - 1) * m_grid->horizontalSpacing() <=
                   width();
        };
        const int columns = fits(4) ? 4 : fits(2) ? 2 : 1;
        if (!force && columns == m_columns) {
            return;
        }
        m_columns = columns;
        for (auto* plot : std::as_const(m_plots)) {
            m_grid->removeWidget(plot);
        }
        for (int i = 0; i < m_plots.size(); ++i) {
            m_grid->addWidget(m_plots[i], static_cast<int>(i) / columns, static_cast<int>(i) % columns);
        }
        for (int i = 0; i < 4; ++i) {
            m_grid->setColumnStretch(i, i < columns ? 1 : 0);
            m_grid->setRowStretch(i, i < (m_plots.size() + columns - 1) / columns ? 1 : 0);
        }
    }

    QGridLayout* m_grid;
    QList<QWidget*> m_plots;
    int m_columns = 0;
};

} // namespace

BenchmarksTab::BenchmarksTab(QWidget* parent)
    : QWidget(parent), m_importer(new BenchImporter(this)), m_lastDirectory(QDir::homePath()),
      m_model(new BenchTableModel(this)), m_proxy(new QSortFilterProxyModel(this)),
      m_clear(new QPushButton(tr("C&lear"), this)), m_copy(new QPushButton(tr("Copy as &Markdown"), this)),
      m_baselineBox(new QComboBox(this)), m_armTag(new QLineEdit(this)), m_promptLenTag(new QSpinBox(this)),
      m_overrideTags(new QCheckBox(tr("O&verride file tags"), this)), m_status(new ElidingLabel(this)),
      m_banner(new QLabel(this)), m_error(new QLabel(this)), m_hint(new QLabel(this)),
      m_table(new QTableView(this)), m_warnings(new QListWidget(this)), m_key(new BenchKey(this)),
      m_speedPanel(new SpeedModelPanel(this))
{
    setAcceptDrops(true);

    auto* importButton =
        new QPushButton(QIcon::fromTheme(QStringLiteral("document-import")), tr("&Import…"), this);
    importButton->setToolTip(tr("Import vLLM bench results (JSON/JSONL), two /metrics scrapes (before, then "
                                "after), CSV, vLLM server logs or llama-bench JSON. You can also drop files "
                                "here."));
    connect(importButton, &QPushButton::clicked, this, &BenchmarksTab::importWithDialog);
    m_clear->setToolTip(tr("Forget every imported file."));
    connect(m_clear, &QPushButton::clicked, this, &BenchmarksTab::clear);
    m_copy->setToolTip(tr("Copy the statistics and comparisons as a GitHub Markdown table."));
    connect(m_copy, &QPushButton::clicked, this, &BenchmarksTab::copyMarkdown);
    m_baselineBox->setToolTip(
        tr("The arm the other arms of its setup are compared with (Welch's t test). Arms run "
           "with another target model or k keep their own baseline."));
    // Wide enough for usual arm names; a long one does not widen the window.
    m_baselineBox->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_baselineBox->setMinimumContentsLength(16);
    connect(m_baselineBox, &QComboBox::activated, this,
            [this](int index) { setBaselineArm(m_baselineBox->itemData(index).toString()); });
    auto* baselineLabel = new QLabel(tr("&Baseline:"), this);
    baselineLabel->setBuddy(m_baselineBox);

    // Tags for files that carry none: a /metrics pair has no arm, a CSV may lack the arm column.
    m_armTag->setObjectName(QStringLiteral("armTag"));
    m_armTag->setPlaceholderText(tr("from the file"));
    m_armTag->setClearButtonEnabled(true);
    m_armTag->setToolTip(tr("Arm given to the next imported files that name none (/metrics pairs, CSV "
                            "without an arm column), e.g. bf16_draft or w4a16_draft."));
    auto* armLabel = new QLabel(tr("&Arm:"), this);
    armLabel->setBuddy(m_armTag);
    m_promptLenTag->setObjectName(QStringLiteral("promptLenTag"));
    m_promptLenTag->setRange(0, 100000000);
    m_promptLenTag->setSpecialValueText(tr("from the file"));
    m_promptLenTag->setToolTip(tr("Prompt length given to the next imported files that state none."));
    auto* promptLabel = new QLabel(tr("&Prompt length:"), this);
    promptLabel->setBuddy(m_promptLenTag);
    m_overrideTags->setObjectName(QStringLiteral("overrideTags"));
    m_overrideTags->setToolTip(tr("Replace the arm and prompt length the files state with the ones given "
                                  "here."));

    auto* toolbar = new QHBoxLayout;
    toolbar->addWidget(importButton);
    toolbar->addWidget(m_clear);
    toolbar->addSpacing(fontMetrics().averageCharWidth() * 2);
    toolbar->addWidget(baselineLabel);
    toolbar->addWidget(m_baselineBox);
    toolbar->addWidget(m_copy);
    toolbar->addStretch(1);
    // A long status ("x.prom is the before scrape: ...") is cut rather than widening the window.
    m_status->setObjectName(QStringLiteral("benchStatus"));
    m_status->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    toolbar->addWidget(m_status, 1);
    auto* tagBar = new QHBoxLayout;
    tagBar->addWidget(new QLabel(tr("Tag imports:"), this));
    tagBar->addWidget(armLabel);
    tagBar->addWidget(m_armTag);
    tagBar->addWidget(promptLabel);
    tagBar->addWidget(m_promptLenTag);
    tagBar->addWidget(m_overrideTags);
    tagBar->addStretch(1);

    // The one failure that raises no error anywhere else: make it impossible to miss.
    m_banner->setObjectName(QStringLiteral("acceptanceCollapseBanner"));
    m_banner->setWordWrap(true);
    m_banner->setTextFormat(Qt::RichText);
    m_banner->setStyleSheet(QStringLiteral("QLabel { background: #b3261e; color: white; padding: 6px; "
                                           "border-radius: 4px; }"));
    m_banner->hide();
    m_error->setObjectName(QStringLiteral("importError"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->setStyleSheet(QStringLiteral("QLabel { color: #d93025; }"));
    m_error->hide();
    m_hint->setText(tr("Drop benchmark results here or use Import…: <i>vllm bench serve --save-result</i> "
                       "JSON, two <i>/metrics</i> scrapes (before, then after), long-form CSV, server logs "
                       "with <i>SpecDecoding metrics:</i> lines, or llama-bench JSON."));
    m_hint->setWordWrap(true);
    m_hint->setAlignment(Qt::AlignCenter);
    m_hint->setEnabled(false);

    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(BenchTableModel::SortRole);
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder); // report order (baseline first) until the user sorts
    m_table->setAlternatingRowColors(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setObjectName(QStringLiteral("benchTable"));
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);

    m_warnings->setObjectName(QStringLiteral("benchWarnings"));
    m_warnings->setWordWrap(true);
    m_warnings->setAlternatingRowColors(true);
    m_warnings->setMinimumHeight(fontMetrics().height() * 2);

    // One key above the four plots (an arm has one colour in all of them) leaves their height to the data.
    auto* plots = new QWidget(this);
    auto* plotsLayout = new QVBoxLayout(plots);
    plotsLayout->setContentsMargins(0, 0, 0, 0);
    plotsLayout->addWidget(m_key);
    auto* grid = new PlotGrid(plots);
    const BenchPlotKind kinds[] = {BenchPlotKind::DecodeSpeed, BenchPlotKind::Delta,
                                   BenchPlotKind::Acceptance, BenchPlotKind::PerPosition};
    for (const auto kind : kinds) {
        auto* plot = new BenchPlotWidget(kind, grid);
        plot->setLegendShown(false);
        m_plots.append(plot);
        grid->addPlot(plot);
    }
    auto* scroll = new QScrollArea(plots);
    scroll->setObjectName(QStringLiteral("benchPlotScroll"));
    scroll->setWidget(grid);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    plotsLayout->addWidget(scroll, 1);
    // The plots and the speed model share the space under the table, one page at a time.
    m_views = new QTabWidget(this);
    m_views->setObjectName(QStringLiteral("benchViews"));
    m_views->setDocumentMode(true);
    m_views->addTab(plots, tr("Plots"));
    // The speed model's plot keeps its data room (plotroom.h) by scrolling in a short window, never by
    // growing the window.
    auto* speedScroll = new QScrollArea(this);
    speedScroll->setObjectName(QStringLiteral("speedModelScroll"));
    speedScroll->setWidget(m_speedPanel);
    speedScroll->setWidgetResizable(true);
    speedScroll->setFrameShape(QFrame::NoFrame);
    m_views->addTab(speedScroll, tr("Speed model"));
    // Only the page on show counts towards the minimum height (a hidden one would squeeze the table).
    auto ignoreHiddenPages = [this](int current) {
        for (int i = 0; i < m_views->count(); ++i) {
            m_views->widget(i)->setSizePolicy(QSizePolicy::Preferred,
                                              i == current ? QSizePolicy::Preferred : QSizePolicy::Ignored);
        }
    };
    connect(m_views, &QTabWidget::currentChanged, this, ignoreHiddenPages);
    connect(m_views, &QTabWidget::currentChanged, this, &BenchmarksTab::fitSplitter);
    ignoreHiddenPages(m_views->currentIndex());

    auto* tables = new QWidget(this);
    auto* tablesLayout = new QVBoxLayout(tables);
    tablesLayout->setContentsMargins(0, 0, 0, 0);
    tablesLayout->addWidget(m_hint);
    tablesLayout->addWidget(m_table, 1);

    // Table, warnings, plots: the first two get the height their rows need (fitSplitter), the plots the
    // rest; a window resize goes to the plots.
    m_splitter = new QSplitter(Qt::Vertical, this);
    m_splitter->setObjectName(QStringLiteral("benchSplitter"));
    m_splitter->addWidget(tables);
    m_splitter->addWidget(m_warnings);
    m_splitter->addWidget(m_views);
    m_splitter->setStretchFactor(0, 0);
    m_splitter->setStretchFactor(1, 0);
    m_splitter->setStretchFactor(2, 1);
    m_splitter->setChildrenCollapsible(false);
    connect(m_splitter, &QSplitter::splitterMoved, this, [this] { m_userSizedSplitter = true; });

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(toolbar);
    layout->addLayout(tagBar);
    layout->addWidget(m_banner);
    layout->addWidget(m_error);
    layout->addWidget(m_splitter, 1);

    connect(m_importer, &BenchImporter::imported, this, &BenchmarksTab::onImported);
    connect(m_importer, &BenchImporter::failed, this, &BenchmarksTab::onFailed);
    rebuildReport();
}

BenchmarksTab::~BenchmarksTab() = default;

std::optional<BenchReport> BenchmarksTab::currentReport() const
{
    if (!m_report) {
        return std::nullopt;
    }
    BenchReport report = *m_report;
    if (const auto model = m_speedPanel->model()) {
        report.speedModel = *model;
    }
    return report;
}

bool BenchmarksTab::isImporting() const
{
    return m_importer->isImporting();
}

QString BenchmarksTab::importError() const
{
    return m_error->isHidden() ? QString() : m_error->text();
}

BenchPlotWidget* BenchmarksTab::plot(BenchPlotKind kind) const
{
    for (auto* plot : m_plots) {
        if (plot->kind() == kind) {
            return plot;
        }
    }
    return nullptr;
}

QString BenchmarksTab::markdown() const
{
    const auto report = currentReport();
    return report ? QString::fromStdString(benchReportMarkdown(*report)) : QString();
}

bool BenchmarksTab::acceptsUrls(const QList<QUrl>& urls)
{
    if (urls.isEmpty()) {
        return false;
    }
    for (const auto& url : urls) {
        if (!url.isLocalFile() || !QFileInfo(url.toLocalFile()).isFile()) {
            return false;
        }
    }
    return true;
}

void BenchmarksTab::importFiles(const QStringList& paths)
{
    QSet<QString> known;
    for (const auto& file : m_files) {
        known.insert(canonical(file));
    }
    if (!m_pendingScrape.isEmpty()) {
        known.insert(canonical(m_pendingScrape));
    }
    QStringList fresh;
    int skipped = 0;
    for (const auto& path : paths) {
        const QString key = canonical(path);
        if (known.contains(key)) {
            ++skipped; // importing a file twice would count its repeats twice
            continue;
        }
        known.insert(key);
        fresh.append(QFileInfo(path).absoluteFilePath());
    }
    if (fresh.isEmpty()) {
        m_status->setFullText(tr("%n file(s) already imported.", nullptr, skipped));
        return;
    }
    m_lastDirectory = QFileInfo(fresh.front()).absolutePath();
    // Scrapes pair up in order (before, after). Dropping them one at a time is the natural way to give
    // that order, so a lone scrape waits for its partner instead of failing as unpaired.
    if (!m_pendingScrape.isEmpty()) {
        fresh.prepend(m_pendingScrape);
        m_pendingScrape.clear();
    } else if (fresh.size() == 1 && isPrometheusScrape(fresh.front())) {
        m_pendingScrape = fresh.front();
        m_status->setFullText(tr("%1 is the \"before\" /metrics scrape: import the \"after\" scrape next.")
                                  .arg(QFileInfo(m_pendingScrape).fileName()));
        m_clear->setEnabled(true);
        return;
    }
    m_status->setFullText(tr("Importing %n file(s)…", nullptr, static_cast<int>(fresh.size())));
    m_importer->import(fresh, importTags());
}

RecordTags BenchmarksTab::importTags() const
{
    RecordTags tags;
    const QString arm = m_armTag->text().trimmed();
    if (!arm.isEmpty()) {
        tags.arm = arm.toStdString();
    }
    if (m_promptLenTag->value() > 0) {
        tags.promptLen = m_promptLenTag->value();
    }
    tags.override = m_overrideTags->isChecked();
    return tags;
}

void BenchmarksTab::setImportTags(const RecordTags& tags)
{
    m_armTag->setText(QString::fromStdString(tags.arm.value_or(std::string())));
    m_promptLenTag->setValue(static_cast<int>(tags.promptLen.value_or(0)));
    m_overrideTags->setChecked(tags.override);
}

void BenchmarksTab::importWithDialog()
{
    const QStringList paths = QFileDialog::getOpenFileNames(
        this, tr("Import Benchmark Results"), m_lastDirectory,
        tr("Benchmark results (*.json *.jsonl *.prom *.txt *.csv *.log);;All files (*)"));
    if (!paths.isEmpty()) {
        importFiles(paths);
    }
}

void BenchmarksTab::onImported(const QStringList& paths, const BenchImport& result)
{
    m_error->hide();
    m_error->clear();
    const auto records = result.records.size();
    m_import.append(result);
    m_files.append(paths);
    rebuildReport();
    m_status->setFullText(tr("Imported %1 from %2.")
                              .arg(tr("%n record(s)", nullptr, static_cast<int>(records)),
                                   tr("%n file(s)", nullptr, static_cast<int>(paths.size()))));
}

void BenchmarksTab::onFailed(const QStringList& paths, const QString& message)
{
    Q_UNUSED(paths);
    m_status->setFullText({});
    showError(message);
    Q_EMIT importFailed(message);
}

void BenchmarksTab::showError(const QString& message)
{
    m_error->setText(tr("Import failed: %1").arg(message));
    m_error->show();
}

void BenchmarksTab::clear()
{
    m_importer->cancel();
    m_import = {};
    m_files.clear();
    m_pendingScrape.clear();
    m_baseline.clear();
    m_error->hide();
    m_error->clear();
    m_status->setFullText({});
    rebuildReport();
}

void BenchmarksTab::setBaselineArm(const QString& arm)
{
    if (arm == m_baseline) {
        return;
    }
    m_baseline = arm;
    rebuildReport();
}

void BenchmarksTab::copyMarkdown()
{
    const QString text = markdown();
    if (text.isEmpty()) {
        return;
    }
    QApplication::clipboard()->setText(text);
    m_status->setFullText(tr("Copied the tables as Markdown."));
}

void BenchmarksTab::rebuildReport()
{
    if (m_import.records.empty()) {
        m_report.reset();
    } else {
        // Statistics over a few hundred records are instant: recomputing here keeps the baseline switch
        // synchronous, while the file parsing (the slow part) runs in the importer's thread.
        BenchReportOptions options;
        if (!m_baseline.isEmpty()) {
            options.baselineArm = m_baseline.toStdString();
        }
        auto report =
            std::make_shared<BenchReport>(buildBenchReport(m_import.records, options, m_import.warnings));
        if (!m_baseline.isEmpty() &&
            std::find(report->arms.begin(), report->arms.end(), report->baselineArm) == report->arms.end()) {
            // The chosen arm is gone (e.g. re-imported with other tags): fall back to the default.
            m_baseline.clear();
            report = std::make_shared<BenchReport>(
                buildBenchReport(m_import.records, BenchReportOptions{}, m_import.warnings));
        }
        m_report = std::move(report);
    }
    m_model->resetData(m_report);
    for (auto* plot : m_plots) {
        plot->setReport(m_report);
    }
    m_key->setReport(m_report.get());
    m_speedPanel->setReport(m_report);
    m_hint->setVisible(!m_report);
    m_table->setVisible(m_report != nullptr);
    m_clear->setEnabled(!m_files.isEmpty());
    m_copy->setEnabled(m_report != nullptr);
    updateBaselineSelector();
    updateWarnings();
    fitSplitter();
    // Once the new rows are laid out (wrapped warnings know their height only at their final width).
    QTimer::singleShot(0, this, &BenchmarksTab::fitSplitter);
    Q_EMIT reportChanged();
}

void BenchmarksTab::fitSplitter()
{
    // Once the user has moved the handles, their sizes stay.
    if (m_userSizedSplitter) {
        return;
    }
    const int total = m_splitter->height() > 0 ? m_splitter->height() : m_splitter->sizeHint().height();
    const int handles = m_splitter->handleWidth() * 2;
    // The table: its header and every row (or the hint's lines before an import).
    int table = m_hint->sizeHint().height();
    if (m_report) {
        table = m_table->horizontalHeader()->sizeHint().height() + 2 * m_table->frameWidth() +
                m_table->verticalHeader()->defaultSectionSize() * m_proxy->rowCount();
        if (m_table->horizontalHeader()->length() + 2 * m_table->frameWidth() > m_splitter->width()) {
            table += m_table->horizontalScrollBar()->sizeHint().height();
        }
    }
    // The warnings: their rows, but at most about four lines of text.
    int warnings = 0;
    if (m_warnings->count() > 0) {
        // Wrapped at the list's width (the view's own row hints are not wrapped until it lays them out).
        const QFontMetrics metrics = m_warnings->fontMetrics();
        const int icon = std::max(m_warnings->iconSize().width(), metrics.height() * 2);
        const int width = std::max(metrics.averageCharWidth() * 20, m_splitter->width() - icon - 12);
        for (int i = 0; i < m_warnings->count(); ++i) {
            const QRect text = metrics.boundingRect(QRect(0, 0, width, 100000), Qt::TextWordWrap,
                                                    m_warnings->item(i)->text());
            warnings += std::max(text.height(), m_warnings->sizeHintForRow(i)) + 4;
        }
        warnings = std::min(warnings + 2 * m_warnings->frameWidth(), metrics.height() * 6);
    }
    // First the table, then the plots' minimum, then the warnings; the plots take the rest. What does not
    // fit scrolls.
    const int available = total - handles;
    const int plotsMinimum = m_views->minimumSizeHint().height();
    const int warningsMinimum = warnings > 0 ? m_warnings->minimumHeight() : 0;
    table = std::min(
        table, std::max(m_table->minimumSizeHint().height(), available - plotsMinimum - warningsMinimum));
    warnings = std::min(warnings, std::max(warningsMinimum, available - table - plotsMinimum));
    m_splitter->setSizes({table, warnings, std::max(plotsMinimum, available - table - warnings)});
}

void BenchmarksTab::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    fitSplitter();
}

void BenchmarksTab::updateBaselineSelector()
{
    m_baselineBox->clear();
    m_baselineBox->setEnabled(m_report && m_report->arms.size() > 1);
    if (!m_report) {
        return;
    }
    for (const auto& arm : m_report->arms) {
        const QString name = QString::fromStdString(arm);
        m_baselineBox->addItem(name, name);
    }
    m_baselineBox->setCurrentIndex(m_baselineBox->findData(QString::fromStdString(m_report->baselineArm)));
}

void BenchmarksTab::updateWarnings()
{
    m_warnings->clear();
    QStringList collapses;
    if (m_report) {
        const QIcon warningIcon = style()->standardIcon(QStyle::SP_MessageBoxWarning);
        for (const auto& warning : m_report->warnings) {
            // The file's name in the list (the whole path in the tool tip): imports sit in one folder.
            BenchWarning shown = warning;
            shown.file = QFileInfo(QString::fromStdString(warning.file)).fileName().toStdString();
            auto* item = new QListWidgetItem(warningIcon, QString::fromStdString(shown.text()), m_warnings);
            item->setData(Qt::UserRole, QString::fromLatin1(benchWarningKindName(warning.kind)));
            item->setToolTip(
                warning.file.empty()
                    ? QString::fromLatin1(benchWarningKindName(warning.kind))
                    : QStringLiteral("%1\n%2").arg(QString::fromLatin1(benchWarningKindName(warning.kind)),
                                                   QString::fromStdString(warning.file)));
            if (warning.kind == BenchWarningKind::AcceptanceCollapse) {
                QFont bold = item->font();
                bold.setBold(true);
                item->setFont(bold);
                collapses.append(QString::fromStdString(warning.message).toHtmlEscaped());
            }
        }
    }
    m_warnings->setVisible(m_warnings->count() > 0);
    if (collapses.isEmpty()) {
        m_banner->hide();
        m_banner->clear();
        return;
    }
    m_banner->setText(tr("<b>Acceptance collapsed.</b> %1").arg(collapses.join(QStringLiteral("<br>"))));
    m_banner->show();
}

void BenchmarksTab::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData() && acceptsUrls(event->mimeData()->urls())) {
        event->acceptProposedAction();
    } else {
        event->ignore();
    }
}

void BenchmarksTab::dropEvent(QDropEvent* event)
{
    if (!event->mimeData() || !acceptsUrls(event->mimeData()->urls())) {
        event->ignore();
        return;
    }
    event->acceptProposedAction();
    QStringList paths;
    for (const auto& url : event->mimeData()->urls()) {
        paths.append(url.toLocalFile());
    }
    // Kept in the order of the drag: two /metrics scrapes pair up as (before, after) in that order.
    importFiles(paths);
}

} // namespace spark
