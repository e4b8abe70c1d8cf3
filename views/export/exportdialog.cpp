#include "views/export/exportdialog.h"

#include "core/io/checkpoint.h"
#include "core/io/stagingdirectory.h"
#include "core/quant/gptq.h"
#include "core/quant/quantbackend.h"
#include "views/shared/formatting.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QStyle>
#include <QUrl>
#include <QVBoxLayout>
#include <cmath>

namespace spark {

namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

/// True when GPTQ can round a module of @p plan (an integer scheme).
bool hasGptqModule(const QuantPlan& plan)
{
    const auto quantized = plan.quantizedModules();
    return std::any_of(quantized.begin(), quantized.end(),
                       [](const PlannedModule* m) { return gptqSupports(*m->scheme); });
}

} // namespace

ExportDialog::ExportDialog(std::shared_ptr<const Checkpoint> source, QuantPlan plan,
                           std::optional<BenchReport> benchmarks, QWidget* parent)
    : QDialog(parent), m_source(std::move(source)), m_plan(std::move(plan)),
      m_benchmarks(std::move(benchmarks)), m_runner(new ExportRunner(this)), m_output(new QLineEdit(this)),
      m_shardSize(new QComboBox(this)), m_backend(new QComboBox(this)), m_modelName(new QLineEdit(this)),
      m_targetModel(new QLineEdit(this)), m_targetPrecision(new QComboBox(this)),
      m_license(new QLineEdit(this)), m_attachBenchmarks(new QCheckBox(this)),
      m_gptq(new QCheckBox(tr("&GPTQ from captured hidden states:"), this)), m_capture(new QLineEdit(this)),
      m_browseCapture(new QPushButton(tr("Bro&wse…"), this)), m_gptqTarget(new QLineEdit(this)),
      m_browseTarget(new QPushButton(tr("B&rowse…"), this)), m_progress(new QProgressBar(this)),
      m_progressText(new QLabel(this)), m_message(new QLabel(this)), m_result(new QLabel(this)),
      m_problems(new QListWidget(this)), m_exportButton(new QPushButton(tr("&Export"), this)),
      m_cancelButton(new QPushButton(tr("Cancel"), this)),
      m_openFolder(new QPushButton(tr("&Open Output Folder"), this))
{
    setWindowTitle(tr("Export %1 Checkpoint").arg(QString::fromStdString(m_plan.schemeSummary())));
    const QString sourceFolder = m_source ? QString::fromStdString(m_source->folder().string()) : QString();

    // Output.
    m_output->setText(defaultOutput(sourceFolder, schemeTag(m_plan)));
    m_output->setToolTip(tr("The folder to create. It must not exist yet (or be empty) and must not lie "
                            "inside the source."));
    m_browse = new QPushButton(tr("&Browse…"), this);
    connect(m_browse, &QPushButton::clicked, this, &ExportDialog::browse);
    auto* outputRow = new QHBoxLayout;
    outputRow->addWidget(m_output, 1);
    outputRow->addWidget(m_browse);

    m_shardSize->addItem(tr("One file (model.safetensors)"), QVariant::fromValue<qulonglong>(0));
    for (const int gib : {1, 2, 5, 10}) {
        m_shardSize->addItem(tr("%1 GiB per shard").arg(gib), QVariant::fromValue<qulonglong>(gib * kGiB));
    }
    m_shardSize->setToolTip(tr("Largest shard file; larger checkpoints get an index file."));

    m_backend->addItem(tr("CPU (SIMD, all cores)"), QStringLiteral("cpu"));
    if (cudaAvailable()) {
        m_backend->addItem(tr("CUDA: %1").arg(QString::fromStdString(cudaDeviceDescription())),
                           QStringLiteral("cuda"));
    }
    m_backend->setToolTip(tr("Where the weights are quantized. CPU and CUDA give bit-identical files."));

    auto* output = new QGroupBox(tr("Output"), this);
    auto* outputForm = new QFormLayout(output);
    auto* folderLabel = new QLabel(tr("&Folder:"), this);
    folderLabel->setBuddy(m_output); // a row holding a layout gets no buddy from QFormLayout
    outputForm->addRow(folderLabel, outputRow);
    outputForm->addRow(tr("&Shards:"), m_shardSize);
    outputForm->addRow(tr("&Backend:"), m_backend);

    // GPTQ: only the integer schemes have it; the scales stay those of the chosen rounding.
    const bool gptqApplies = hasGptqModule(m_plan);
    m_gptq->setToolTip(gptqApplies ? tr("Runs the BF16 draft over a capture of target hidden states and "
                                        "solves the codes of every integer-scheme module with GPTQ "
                                        "(llm-compressor's algorithm). Scales stay those of the rounding "
                                        "method; vLLM loads the result like any other.")
                                   : tr("GPTQ needs a module with an integer scheme (W4A16, W8A16, …)."));
    m_capture->setPlaceholderText(tr("capture file or hs_*.safetensors folder"));
    m_capture->setToolTip(
        tr("The capture GPTQ calibrates on; the hessian rounding needs one as well, with or "
           "without GPTQ."));
    m_gptqTarget->setPlaceholderText(tr("if the draft shares the target's embeddings"));
    connect(m_gptq, &QCheckBox::toggled, this, [this] { updateGptqWidgets(false); });
    connect(m_browseCapture, &QPushButton::clicked, this, &ExportDialog::browseCapture);
    connect(m_browseTarget, &QPushButton::clicked, this, [this] {
        const QString chosen =
            QFileDialog::getExistingDirectory(this, tr("Target Model Checkpoint"), m_gptqTarget->text());
        if (!chosen.isEmpty()) {
            m_gptqTarget->setText(QDir::toNativeSeparators(chosen));
        }
    });
    auto* gptqRow = new QHBoxLayout;
    gptqRow->addWidget(m_capture, 1);
    gptqRow->addWidget(m_browseCapture);
    outputForm->addRow(m_gptq, gptqRow);
    auto* targetRow = new QHBoxLayout;
    targetRow->addWidget(m_gptqTarget, 1);
    targetRow->addWidget(m_browseTarget);
    auto* targetLabel = new QLabel(tr("Target chec&kpoint:"), this);
    targetLabel->setBuddy(m_gptqTarget);
    outputForm->addRow(targetLabel, targetRow);
    updateGptqWidgets(false);
    auto* planLabel = new QLabel(
        tr("%1 preset · %2 · %n module(s) quantized", nullptr,
           static_cast<int>(m_plan.quantizedModules().size()))
            .arg(QString::fromStdString(m_plan.preset), QString::fromStdString(m_plan.schemeSummary())),
        this);
    outputForm->addRow(tr("Plan:"), planLabel);

    // Model card.
    m_modelName->setPlaceholderText(tr("the output folder name"));
    m_targetModel->setPlaceholderText(tr("from config.json, e.g. Qwen/Qwen3-32B"));
    m_targetModel->setToolTip(tr("The target (verifier) model this draft is served with."));
    m_targetPrecision->setEditable(true);
    m_targetPrecision->addItems({QStringLiteral("BF16"), QStringLiteral("FP8"), QStringLiteral("FP8-dynamic"),
                                 QStringLiteral("W8A8"), QStringLiteral("W4A16"), QStringLiteral("NVFP4"),
                                 QStringLiteral("MXFP4")});
    m_targetPrecision->setToolTip(tr("The precision of the target the draft was checked against."));
    m_license->setPlaceholderText(tr("from the source README, else \"other\""));
    auto* pairingNote = new QLabel(tr("A draft is trained against one target. Paired with another target or "
                                      "another target precision it can accept almost no tokens without any "
                                      "error: the card states the pairing so users serve it as checked."),
                                   this);
    pairingNote->setWordWrap(true);
    QFont small = pairingNote->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    pairingNote->setFont(small);
    if (m_benchmarks && !m_benchmarks->cells.empty()) {
        m_attachBenchmarks->setText(
            tr("Include the imported benchmarks (%1)")
                .arg(tr("%n arm(s)", nullptr, static_cast<int>(m_benchmarks->arms.size()))));
        m_attachBenchmarks->setChecked(true);
    } else {
        m_attachBenchmarks->setText(tr("Include benchmarks (import them in the Benchmarks tab)"));
        m_attachBenchmarks->setEnabled(false);
    }
    auto* card = new QGroupBox(tr("Model card (README.md)"), this);
    auto* cardForm = new QFormLayout(card);
    cardForm->addRow(tr("&Model name:"), m_modelName);
    cardForm->addRow(tr("&Target model:"), m_targetModel);
    cardForm->addRow(tr("Target &precision:"), m_targetPrecision);
    cardForm->addRow(tr("&License:"), m_license);
    cardForm->addRow(pairingNote);
    cardForm->addRow(m_attachBenchmarks);

    // Progress and result.
    m_progress->setRange(0, 2 * ExportRunner::kStageRange);
    m_progress->setValue(0);
    m_progress->setTextVisible(false);
    m_message->setObjectName(QStringLiteral("exportMessage"));
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
    m_message->hide();
    m_result->setObjectName(QStringLiteral("verifyResult"));
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_result->hide();
    m_problems->setObjectName(QStringLiteral("verifyProblems"));
    m_problems->hide();

    m_exportButton->setDefault(true);
    m_openFolder->setEnabled(false);
    m_openFolder->setToolTip(tr("Show the exported folder in the file manager."));
    connect(m_exportButton, &QPushButton::clicked, this, &ExportDialog::startExport);
    connect(m_cancelButton, &QPushButton::clicked, this, &ExportDialog::reject);
    connect(m_openFolder, &QPushButton::clicked, this, &ExportDialog::openOutputFolder);
    auto* buttons = new QDialogButtonBox(this);
    buttons->addButton(m_openFolder, QDialogButtonBox::ActionRole);
    buttons->addButton(m_exportButton, QDialogButtonBox::AcceptRole);
    buttons->addButton(m_cancelButton, QDialogButtonBox::RejectRole);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(output);
    layout->addWidget(card);
    layout->addWidget(m_progress);
    layout->addWidget(m_progressText);
    layout->addWidget(m_message);
    // The "Use …" link of a refusal for a non-empty folder takes the free name Sparkulator offers.
    connect(m_message, &QLabel::linkActivated, this, [this] {
        if (!m_suggestion.isEmpty()) {
            setOutputPath(m_suggestion);
            m_message->hide();
        }
    });
    layout->addWidget(m_result);
    layout->addWidget(m_problems, 1);
    layout->addWidget(buttons);

    connect(m_runner, &ExportRunner::progressChanged, this, &ExportDialog::onProgress);
    connect(m_runner, &ExportRunner::finished, this, &ExportDialog::onFinished);

    if (!m_plan.errors.empty()) {
        showMessage(tr("The plan has errors; fix them in the Plan tab first: %1")
                        .arg(QString::fromStdString(m_plan.errors.front())),
                    true);
        m_exportButton->setEnabled(false);
    } else if (!m_source) {
        showMessage(tr("Open a checkpoint first."), true);
        m_exportButton->setEnabled(false);
    }
    // The wrapped pairing note needs height-for-width: sizeHint() alone would cut it off.
    const int width = fontMetrics().averageCharWidth() * 90;
    resize(width, std::max(sizeHint().height(), heightForWidth(width)));
}

ExportDialog::~ExportDialog() = default;

QString ExportDialog::schemeTag(const QuantPlan& plan)
{
    const auto schemes = plan.schemesUsed();
    if (schemes.size() > 1) {
        return QStringLiteral("mixed");
    }
    const auto* scheme = schemes.empty() ? plan.defaultScheme : schemes.front();
    return QString::fromLatin1(scheme->name.data(), static_cast<qsizetype>(scheme->name.size()))
        .toLower()
        .replace(QLatin1Char(':'), QLatin1Char('-'));
}

QString ExportDialog::defaultOutput(const QString& sourceFolder, const QString& schemeTag)
{
    if (sourceFolder.isEmpty()) {
        return {};
    }
    // Beside the source, unless that is a Hugging Face cache snapshot (an export there lands among the
    // cache's blobs and goes with the next cache clean-up) or a folder the user cannot write: then in home.
    const QFileInfo source(QDir::cleanPath(sourceFolder));
    const QFileInfo parent(source.absolutePath());
    const bool inHfCache = source.absoluteFilePath().contains(QStringLiteral("/snapshots/")) &&
                           source.absoluteFilePath().contains(QStringLiteral("/models--"));
    const QString folder = inHfCache || !parent.isWritable() ? QDir::homePath() : parent.absoluteFilePath();
    // A snapshot's folder is its commit hash: name the export after the model instead.
    QString name = source.fileName();
    if (inHfCache) {
        const auto parts = source.absoluteFilePath().split(QLatin1Char('/'));
        for (const auto& part : parts) {
            if (part.startsWith(QStringLiteral("models--"))) {
                name = part.mid(8).section(QStringLiteral("--"), -1);
            }
        }
    }
    const QString base = QDir(folder).filePath(name) + QLatin1Char('-') + schemeTag;
    QString candidate = base;
    for (int i = 2; QFileInfo::exists(candidate); ++i) {
        candidate = base + QLatin1Char('-') + QString::number(i);
    }
    return QDir::toNativeSeparators(candidate);
}

QString ExportDialog::nextFreeOutput(const QString& output)
{
    const QString base = QDir::cleanPath(QDir::fromNativeSeparators(output));
    QString candidate = base + QStringLiteral("-2");
    for (int i = 3; QFileInfo::exists(candidate); ++i) {
        candidate = base + QLatin1Char('-') + QString::number(i);
    }
    return candidate;
}

QString ExportDialog::outputPath() const
{
    return QDir::cleanPath(QDir::fromNativeSeparators(m_output->text().trimmed()));
}

void ExportDialog::setOutputPath(const QString& path)
{
    m_output->setText(QDir::toNativeSeparators(path));
}

bool ExportDialog::isRunning() const
{
    return m_runner->isRunning();
}

QString ExportDialog::message() const
{
    return m_message->isHidden() ? QString() : m_messageText;
}

void ExportDialog::browse()
{
    // A save dialog, not a directory chooser: the output is a new folder the user names.
    const QString chosen = QFileDialog::getSaveFileName(this, tr("Export To Folder"), outputPath());
    if (!chosen.isEmpty()) {
        setOutputPath(chosen);
    }
}

void ExportDialog::browseCapture()
{
    const QString chosen =
        QFileDialog::getOpenFileName(this, tr("Capture of Target Hidden States"), m_capture->text(),
                                     tr("Captures (*.safetensors);;All files (*)"));
    if (!chosen.isEmpty()) {
        m_capture->setText(QDir::toNativeSeparators(chosen));
    }
}

QString ExportDialog::validate()
{
    m_suggestion.clear();
    if (!m_source) {
        return tr("Open a checkpoint first.");
    }
    if (!m_plan.errors.empty()) {
        return tr("The plan has errors: %1").arg(QString::fromStdString(m_plan.errors.front()));
    }
    const QString output = outputPath();
    if (m_output->text().trimmed().isEmpty()) {
        return tr("Choose an output folder: type a new folder's path or use Browse….");
    }
    const QString shown = QDir::toNativeSeparators(output);
    // Checked before "not empty": the source folder is never empty, and that reason is the one to act on.
    const std::filesystem::path target = output.toStdString();
    if (isSameOrInside(m_source->folder(), target) && isSameOrInside(target, m_source->folder())) {
        return tr("%1 is the source draft's folder: the export needs a new folder; choose another.")
            .arg(shown);
    }
    if (isSameOrInside(target, m_source->folder())) {
        return tr("%1 lies inside the source checkpoint; choose a folder outside it.").arg(shown);
    }
    if (needsCapture()) {
        const QString capture = m_capture->text().trimmed();
        if (capture.isEmpty()) {
            return m_gptq->isChecked()
                       ? tr("GPTQ needs a capture of target hidden states: choose its file or hs_* folder.")
                       : tr("The hessian rounding chooses scales on a capture of target hidden states: "
                            "choose its file or hs_* folder.");
        }
        if (!QFileInfo::exists(capture)) {
            return tr("The capture %1 does not exist.").arg(capture);
        }
        const QString target = m_gptqTarget->text().trimmed();
        if (!target.isEmpty() && !QFileInfo::exists(target)) {
            return tr("The target checkpoint %1 does not exist.").arg(target);
        }
    }
    const QFileInfo info(output);
    if (info.exists() && !info.isDir()) {
        return tr("%1 already exists and is a file: choose a folder name that is not taken.").arg(shown);
    }
    if (info.exists() && !QDir(output).isEmpty()) {
        m_suggestion = nextFreeOutput(output);
        return tr("%1 already exists and is not empty: choose another folder or let Sparkulator name it %2.")
            .arg(shown, QDir::toNativeSeparators(m_suggestion));
    }
    return {};
}

bool ExportDialog::startExport()
{
    if (isRunning()) {
        return false;
    }
    // A new attempt: whatever the last one showed no longer applies, whether this one starts or not.
    clearResult();
    const QString problem = validate();
    if (!problem.isEmpty()) {
        showMessage(problem, true);
        return false;
    }
    ExportRequest request;
    request.source = m_source;
    request.plan = m_plan;
    request.output = outputPath();
    request.maxShardBytes = m_shardSize->currentData().toULongLong();
    request.backend =
        m_backend->currentData().toString() == QStringLiteral("cuda") ? Backend::Cuda : Backend::Cpu;
    request.card.modelName = m_modelName->text().trimmed().toStdString();
    request.card.targetModel = m_targetModel->text().trimmed().toStdString();
    const QString precision = m_targetPrecision->currentText().trimmed();
    request.card.targetPrecision = precision.isEmpty() ? std::string("BF16") : precision.toStdString();
    request.card.license = m_license->text().trimmed().toStdString();
    if (m_attachBenchmarks->isEnabled() && m_attachBenchmarks->isChecked()) {
        request.card.benchmarks = m_benchmarks;
    }
    if (needsCapture()) {
        request.calibration.emplace();
        request.calibration->gptq = m_gptq->isChecked();
        request.calibration->capture = QDir::fromNativeSeparators(m_capture->text().trimmed()).toStdString();
        request.calibration->target =
            QDir::fromNativeSeparators(m_gptqTarget->text().trimmed()).toStdString();
    }
    m_progressText->setText(tr("Starting…"));
    m_stage = -1;
    if (!m_runner->start(std::move(request))) {
        showMessage(tr("An export is already running."), true);
        return false;
    }
    setRunning(true);
    return true;
}

void ExportDialog::clearResult()
{
    m_outcome.reset();
    m_result->clear();
    m_result->hide();
    m_problems->clear();
    m_problems->hide();
    m_message->clear();
    m_message->hide();
    m_messageText.clear();
    m_suggestion.clear();
    m_progress->setValue(0);
    m_progressText->clear();
    m_openFolder->setEnabled(false);
}

void ExportDialog::setRunning(bool running)
{
    m_exportButton->setEnabled(!running && m_plan.errors.empty() && m_source);
    m_cancelButton->setText(running ? tr("Cancel") : tr("Close"));
    for (auto* widget :
         std::initializer_list<QWidget*>{m_output, m_browse, m_shardSize, m_backend, m_modelName,
                                         m_targetModel, m_targetPrecision, m_license}) {
        widget->setEnabled(!running);
    }
    updateGptqWidgets(running);
    m_attachBenchmarks->setEnabled(!running && m_benchmarks && !m_benchmarks->cells.empty());
    if (running) {
        m_openFolder->setEnabled(false);
    }
}

void ExportDialog::updateGptqWidgets(bool running)
{
    m_gptq->setEnabled(!running && hasGptqModule(m_plan));
    for (auto* widget :
         std::initializer_list<QWidget*>{m_capture, m_browseCapture, m_gptqTarget, m_browseTarget}) {
        widget->setEnabled(!running && needsCapture());
    }
}

bool ExportDialog::needsCapture() const
{
    return m_gptq->isChecked() || planNeedsCapture(m_plan);
}

void ExportDialog::onProgress(int value, const QString& text)
{
    m_progress->setValue(value);
    const int stage = value >= ExportRunner::kStageRange ? 1 : 0;
    if (stage != m_stage) {
        m_stage = stage;
        m_stageTimer.start();
    }
    const double fraction =
        static_cast<double>(value - stage * ExportRunner::kStageRange) / ExportRunner::kStageRange;
    QString line = text;
    // Below 2 % the rate is mostly start-up cost: an estimate would jump around.
    if (fraction > 0.02 && fraction < 1.0 && m_stageTimer.isValid()) {
        const double elapsed = static_cast<double>(m_stageTimer.elapsed()) / 1000.0;
        line = tr("%1 · about %2 left").arg(text, formatDuration(elapsed * (1.0 - fraction) / fraction));
    }
    m_progressText->setText(line);
}

void ExportDialog::onFinished(const ExportOutcome& outcome)
{
    m_outcome = outcome;
    setRunning(false);
    const QString output = QDir::toNativeSeparators(outcome.output);
    switch (outcome.status) {
    case ExportOutcome::Status::Cancelled:
        m_progress->setValue(0);
        m_progressText->setText(tr("Cancelled. Nothing was written."));
        break;
    case ExportOutcome::Status::Failed:
        m_progress->setValue(0);
        m_progressText->setText(tr("Export failed. Nothing was written."));
        showMessage(outcome.error, true);
        break;
    case ExportOutcome::Status::Succeeded: {
        m_progress->setValue(m_progress->maximum());
        m_openFolder->setEnabled(true);
        m_progressText->setText(tr("Exported %1 in %2: %3 → %4, %5.")
                                    .arg(output, formatDuration(outcome.seconds),
                                         localizedBytes(outcome.result.bytesBefore),
                                         localizedBytes(outcome.result.bytesAfter),
                                         tr("%n module(s) quantized", nullptr,
                                            static_cast<int>(outcome.result.quantizedModules))));
        QString verdict;
        if (!outcome.verify) {
            verdict =
                tr("<b>Not verified</b> (verification was cancelled). Run <i>sparkulator-cli verify</i> "
                   "on the output to check it.");
        } else if (outcome.verify->ok()) {
            verdict = tr("<b>Verified.</b> %1")
                          .arg(QString::fromStdString(outcome.verify->summary()).toHtmlEscaped());
        } else {
            verdict = tr("<b>Verification found problems.</b> %1")
                          .arg(QString::fromStdString(outcome.verify->summary()).toHtmlEscaped());
        }
        if (!outcome.calibrationSummary.isEmpty()) {
            verdict += QStringLiteral("<br>") + outcome.calibrationSummary.toHtmlEscaped();
        }
        m_result->setText(verdict);
        m_result->show();
        if (outcome.verify && !outcome.verify->ok()) {
            const QIcon icon = style()->standardIcon(QStyle::SP_MessageBoxCritical);
            for (const auto& problem : outcome.verify->problems) {
                new QListWidgetItem(icon,
                                    tr("%1: %2").arg(QString::fromStdString(problem.subject),
                                                     QString::fromStdString(problem.message)),
                                    m_problems);
            }
            m_problems->show();
        }
        break;
    }
    }
    Q_EMIT exportFinished(outcome);
}

void ExportDialog::showMessage(const QString& text, bool error)
{
    m_messageText = text;
    if (m_suggestion.isEmpty()) {
        m_message->setTextFormat(Qt::PlainText);
        m_message->setText(text);
    } else {
        m_message->setTextFormat(Qt::RichText);
        m_message->setText(text.toHtmlEscaped() + QStringLiteral(" <a href=\"use\">") +
                           tr("Use %1").arg(QDir::toNativeSeparators(m_suggestion)).toHtmlEscaped() +
                           QStringLiteral("</a>"));
    }
    m_message->setStyleSheet(error ? QStringLiteral("QLabel { color: #d93025; }") : QString());
    m_message->show();
}

void ExportDialog::reject()
{
    if (isRunning()) {
        // Core stops at its next progress report and removes its staging folder; the dialog stays until
        // then so that nothing is still being written when it disappears.
        m_runner->cancel();
        m_progressText->setText(tr("Cancelling…"));
        return;
    }
    QDialog::reject();
}

void ExportDialog::openOutputFolder()
{
    if (m_outcome && m_outcome->status == ExportOutcome::Status::Succeeded) {
        QDesktopServices::openUrl(QUrl::fromLocalFile(m_outcome->output));
    }
}

} // namespace spark
