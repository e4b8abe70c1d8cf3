#include "views/compare/compareview.h"

#include "core/io/checkpoint.h"
#include "views/compare/comparemodel.h"
#include "views/compare/compareplot.h"
#include "views/shared/checkpointpaths.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace spark {

namespace {

QWidget* pathRow(QLineEdit* edit, QWidget* parent)
{
    auto* row = new QWidget(parent);
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(edit);
    new CheckpointDropFilter(edit);
    auto* browse = new QPushButton(CompareView::tr("Browse…"), row);
    QObject::connect(browse, &QPushButton::clicked, edit, [edit] {
        const auto dir = QFileDialog::getExistingDirectory(
            edit, CompareView::tr("Choose a checkpoint folder"), edit->text());
        if (!dir.isEmpty()) {
            edit->setText(dir);
        }
    });
    layout->addWidget(browse);
    return row;
}

/// The tensors behind the summary's counts (norms and buffers have no row of their own), for its tooltip.
QString tensorListing(const CompareReport& report)
{
    QStringList lines;
    const auto add = [&lines](const QString& title, const std::vector<std::string>& tensors) {
        if (tensors.empty()) {
            return;
        }
        constexpr std::size_t kShown = 20;
        QStringList names;
        for (std::size_t i = 0; i < std::min(tensors.size(), kShown); ++i) {
            names << QString::fromStdString(tensors[i]);
        }
        if (tensors.size() > kShown) {
            names << CompareView::tr("… and %1 more").arg(tensors.size() - kShown);
        }
        lines << title + QLatin1Char('\n') + names.join(QLatin1Char('\n'));
    };
    add(CompareView::tr("Copied tensors that differ from the source:"), report.differingTensors);
    add(CompareView::tr("Source tensors missing from the output:"), report.missingTensors);
    add(CompareView::tr("Unexpected output tensors:"), report.extraTensors);
    return lines.join(QStringLiteral("\n\n"));
}

} // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent), m_source(new QLineEdit(this)), m_output(new QLineEdit(this)),
      m_run(new QPushButton(tr("&Compare"), this)), m_status(new QLabel(this)),
      m_model(new CompareModel(this)), m_proxy(new QSortFilterProxyModel(this)),
      m_table(new QTableView(this)), m_plot(new ComparePlot(this)),
      m_job(
          this,
          [this](double fraction) {
              m_status->setText(tr("Comparing… %1 %").arg(static_cast<int>(fraction * 100)));
          },
          [this](const Outcome& outcome) { onFinished(outcome); })
{
    m_source->setObjectName(QStringLiteral("compareSource"));
    m_output->setObjectName(QStringLiteral("compareOutput"));
    m_source->setPlaceholderText(tr("BF16 source checkpoint: type, browse or drop a folder"));
    m_output->setPlaceholderText(tr("quantized output of it (any compressed-tensors checkpoint)"));
    auto* form = new QFormLayout;
    form->addRow(tr("Source:"), pathRow(m_source, this));
    form->addRow(tr("Output:"), pathRow(m_output, this));
    auto* top = new QHBoxLayout;
    top->addLayout(form, 1);
    top->addWidget(m_run, 0, Qt::AlignBottom);

    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(CompareModel::SortRole);
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(0, Qt::AscendingOrder); // the header's default is descending
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6); // as the other tables

    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_table);
    splitter->addWidget(m_plot);
    // The plot's module names stand under its bars: it gets as much height as the table, from the start
    // (the table's size hint would otherwise take two thirds).
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({1, 1});

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_status);
    layout->addWidget(splitter, 1);
    m_status->setWordWrap(true);
    m_status->setText(tr("Pick a BF16 source and a quantized output of it."));

    connect(m_run, &QPushButton::clicked, this, &CompareView::startCompare);
}

void CompareView::setPaths(const QString& source, const QString& output)
{
    m_source->setText(source);
    m_output->setText(output);
}

void CompareView::suggestPath(const QString& path, bool quantized)
{
    const auto same = [&](QLineEdit* field) {
        return QDir::cleanPath(field->text().trimmed()) == QDir::cleanPath(path);
    };
    if (same(m_source) || same(m_output)) {
        return;
    }
    // Another draft takes the field of its kind (a quantized one is likely an export of the source there);
    // the last result was of other checkpoints and goes.
    (quantized ? m_output : m_source)->setText(path);
    clearResult();
}

void CompareView::clearResult()
{
    m_model->resetData(nullptr);
    m_plot->setReport(nullptr);
    m_status->setToolTip(QString());
    m_status->setText(tr("Pick a BF16 source and a quantized output of it."));
}

QString CompareView::sourcePath() const
{
    return m_source->text();
}

QString CompareView::outputPath() const
{
    return m_output->text();
}

bool CompareView::isRunning() const
{
    return m_job.isRunning();
}

const CompareReport* CompareView::report() const
{
    return m_model->report();
}

QString CompareView::statusText() const
{
    return m_status->text();
}

void CompareView::startCompare()
{
    const auto source = m_source->text().trimmed();
    const auto output = m_output->text().trimmed();
    for (const auto& path : {source, output}) {
        if (path.isEmpty() || !QFileInfo::exists(path)) {
            m_status->setText(tr("No checkpoint at '%1'.").arg(path));
            Q_EMIT finished();
            return;
        }
    }
    m_run->setEnabled(false);
    m_status->setText(tr("Comparing…"));
    m_job.start([source, output](const ProgressFn& progress) {
        const auto src = Checkpoint::open(source.toStdString());
        const auto out = Checkpoint::open(output.toStdString());
        CompareOptions options;
        options.progress = progress;
        return Outcome{std::make_shared<const CompareReport>(compareCheckpoints(src, out, options)), {}};
    });
}

void CompareView::onFinished(const Outcome& outcome)
{
    if (!outcome.report && outcome.error.isEmpty()) {
        return; // cancelled by a newer comparison, which reports instead
    }
    m_run->setEnabled(true);
    if (!outcome.report) {
        // No table of an older pair, nor of a pair that is not source and quantization, stays behind.
        clearResult();
        m_status->setText(tr("Cannot compare: %1").arg(outcome.error));
        Q_EMIT finished();
        return;
    }
    m_model->resetData(outcome.report);
    m_plot->setReport(outcome.report);
    m_table->resizeColumnsToContents();
    m_status->setText(QString::fromStdString(outcome.report->summary()));
    m_status->setToolTip(tensorListing(*outcome.report));
    Q_EMIT finished();
}

} // namespace spark
