#include "views/acceptance/acceptancepanel.h"

#include "core/forward/acceptancerates.h"
#include "core/forward/acceptancespeed.h"
#include "core/forward/captureconverter.h"
#include "core/forward/gemm.h"
#include "core/io/filewriter.h"
#include "views/acceptance/acceptanceplot.h"
#include "views/acceptance/acceptancepositionmodel.h"
#include "views/acceptance/acceptancerunner.h"
#include "views/acceptance/sensitivitymodel.h"
#include "views/document/document.h"
#include "views/document/documentsnapshot.h"
#include "views/plan/plancontroller.h"
#include "views/shared/checkpointpaths.h"

#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <limits>
#include <stdexcept>

namespace spark {
namespace {

/// A path field with its browse buttons: @p file asks for a file, @p folder for a folder (either may be
/// empty).
QWidget* pathRow(QLineEdit* edit, const QString& file, const QString& folder, QWidget* parent)
{
    auto* row = new QWidget(parent);
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(edit, 1);
    new CheckpointDropFilter(edit);
    if (!file.isEmpty()) {
        auto* browse = new QPushButton(file, row);
        QObject::connect(browse, &QPushButton::clicked, edit, [edit] {
            const auto path = QFileDialog::getOpenFileName(
                edit, AcceptancePanel::tr("Choose a capture file"), QFileInfo(edit->text()).absolutePath(),
                AcceptancePanel::tr("Captures (*.safetensors);;All files (*)"));
            if (!path.isEmpty()) {
                edit->setText(path);
            }
        });
        layout->addWidget(browse);
    }
    if (!folder.isEmpty()) {
        auto* browse = new QPushButton(folder, row);
        QObject::connect(browse, &QPushButton::clicked, edit, [edit] {
            const auto dir =
                QFileDialog::getExistingDirectory(edit, AcceptancePanel::tr("Choose a folder"), edit->text());
            if (!dir.isEmpty()) {
                edit->setText(dir);
            }
        });
        layout->addWidget(browse);
    }
    return row;
}

QString signedFixed(double v, int digits = 4)
{
    return (v >= 0 ? QStringLiteral("+") : QString()) + QLocale().toString(v, 'f', digits);
}

QString percent(double v)
{
    return signedFixed(100 * v, 2) + QStringLiteral(" %");
}

std::filesystem::path toPath(const QString& text)
{
    return std::filesystem::path(QDir::fromNativeSeparators(text.trimmed()).toStdString());
}

QDoubleSpinBox* msSpin(const QString& special, QWidget* parent)
{
    auto* spin = new QDoubleSpinBox(parent);
    spin->setRange(0, 100000);
    spin->setDecimals(2);
    spin->setSuffix(AcceptancePanel::tr(" ms"));
    spin->setSpecialValueText(special); // 0: not given
    return spin;
}

void setupTable(QTableView* table, int rowHeight)
{
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->verticalHeader()->hide();
    table->verticalHeader()->setDefaultSectionSize(rowHeight);
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table->horizontalHeader()->setStretchLastSection(true);
    table->setWordWrap(false);
}

/// The probe's finding, with the control that applies its suggestion.
QString layerIdAdvice(const LayerIdProbe& probe)
{
    return QCoreApplication::translate("AcceptancePanel", "Note: %1: set Layer ids to %2.")
        .arg(QString::fromStdString(probe.advice),
             QString::fromStdString(layerIdArgument(probe.suggestedLayerIds)));
}

QString promptUnknownAdvice()
{
    return QCoreApplication::translate("AcceptancePanel",
                                       "Note: %1: give the prompt length in Prompt tokens.")
        .arg(QString::fromStdString(promptUnknownNote()));
}

} // namespace

AcceptancePanel::AcceptancePanel(PlanController* controller, QWidget* parent)
    : QWidget(parent), m_controller(controller), m_runner(new AcceptanceRunner(this)),
      m_capture(new QLineEdit(this)), m_target(new QLineEdit(this)), m_layerIds(new QLineEdit(this)),
      m_promptTokens(new QSpinBox(this)), m_quantized(new QLineEdit(this)),
      m_usePlan(new QRadioButton(tr("The Plan tab's plan, applied in memory"), this)),
      m_useCheckpoint(new QRadioButton(tr("A quantized checkpoint:"), this)),
      m_quantGroup(new QButtonGroup(this)), m_k(new QSpinBox(this)), m_anchors(new QSpinBox(this)),
      m_seed(new QSpinBox(this)), m_temperature(new QDoubleSpinBox(this)), m_drafting(new QComboBox(this)),
      m_bf16Activations(new QCheckBox(tr("BF16 &activations"), this)),
      m_numericsFloor(new QCheckBox(tr("Numerics &floor"), this)), m_run(new QPushButton(tr("&Run"), this)),
      m_cancel(new QPushButton(tr("Cancel"), this)),
      m_sensitivity(new QPushButton(tr("Per-unit &sensitivity"), this)), m_progress(new JobProgressBar(this)),
      m_status(new QLabel(this)), m_plot(new AcceptancePlot(this)),
      m_positions(new AcceptancePositionModel(this)), m_positionTable(new QTableView(this)),
      m_tau(new QLabel(this)), m_drafterMs(msSpin(tr("not given"), this)),
      m_cycleMs(msSpin(tr("not given"), this)), m_savingMs(msSpin(tr("from the plan's bytes"), this)),
      m_speed(new QLabel(this)), m_units(new SensitivityModel(this)), m_unitTable(new QTableView(this)),
      m_useAlpha(new QPushButton(tr("Use as α &in the Budget tab"), this)),
      m_exportRates(new QPushButton(tr("E&xport Rates for vLLM…"), this)),
      m_checkCapture(new QPushButton(tr("C&heck Capture"), this)),
      m_convertCapture(new QPushButton(tr("Con&vert Capture…"), this)),
      m_conversion(
          this, [this](double f) { m_progress->setFraction(f); },
          [this](const CaptureConversion& r) {
              m_convertCapture->setEnabled(true);
              jobsChanged();
              if (!r.error.isEmpty() || r.written.isEmpty()) {
                  m_progress->clear();
                  setStatus(r.error.isEmpty() ? tr("Cancelled.") : r.error, !r.error.isEmpty());
              } else {
                  m_progress->finish();
                  setStatus(tr("Written %1, the product's capture format.")
                                .arg(QDir::toNativeSeparators(r.written)),
                            false);
              }
          }),
      m_captureCheck(
          this, [this](double f) { m_progress->setFraction(f); },
          [this](const CaptureCheck& r) { onCaptureChecked(r); })
{
    setAcceptDrops(true);
    m_capture->setObjectName(QStringLiteral("acceptanceCapture"));
    m_target->setObjectName(QStringLiteral("acceptanceTarget"));
    m_quantized->setObjectName(QStringLiteral("acceptanceQuantized"));
    m_status->setObjectName(QStringLiteral("acceptanceStatus"));
    m_capture->setPlaceholderText(tr("capture file or folder (speculators' hs_* or vLLM's connector files "
                                     "too): type, browse or drop it anywhere on this tab"));
    m_layerIds->setObjectName(QStringLiteral("acceptanceLayerIds"));
    m_layerIds->setPlaceholderText(tr("as recorded, or the draft's"));
    m_layerIds->setToolTip(
        tr("The captured layers' ids in slot order, e.g. 1, 3, 5, 6. vLLM's and speculators' files record "
           "none (the draft's ids, plus the target's last layer, are then assumed); ids given here replace "
           "recorded ones, e.g. of a capture written one layer off."));
    m_promptTokens->setObjectName(QStringLiteral("acceptancePromptTokens"));
    m_promptTokens->setRange(-1, std::numeric_limits<int>::max());
    m_promptTokens->setValue(-1);
    m_promptTokens->setSpecialValueText(tr("as recorded"));
    m_promptTokens->setToolTip(
        tr("Leading tokens of every captured sequence that the target did not generate, for captures without "
           "a loss mask (vLLM's connector files)"));
    m_target->setPlaceholderText(
        tr("optional: the target checkpoint, when the draft reads its embeddings or head"));
    m_quantized->setPlaceholderText(tr("compressed-tensors checkpoint of the open draft"));
    m_usePlan->setChecked(true);
    m_quantGroup->addButton(m_usePlan);
    m_quantGroup->addButton(m_useCheckpoint);
    m_quantized->setEnabled(false);
    connect(m_useCheckpoint, &QRadioButton::toggled, m_quantized, &QLineEdit::setEnabled);

    m_k->setRange(1, 64);
    m_k->setValue(2);
    m_k->setToolTip(tr("Proposals per verify cycle (num_speculative_tokens)"));
    m_anchors->setRange(0, std::numeric_limits<int>::max());
    m_anchors->setValue(512);
    m_anchors->setSpecialValueText(tr("all"));
    m_anchors->setToolTip(tr("Anchors sampled in the generated region; 0 evaluates every eligible anchor"));
    m_seed->setRange(0, std::numeric_limits<int>::max());
    m_seed->setToolTip(tr("The same seed samples the same anchors on every machine"));
    m_temperature->setObjectName(QStringLiteral("acceptanceTemperature"));
    m_temperature->setRange(0, 5);
    m_temperature->setDecimals(2);
    m_temperature->setSingleStep(0.1);
    m_temperature->setPrefix(tr("T = "));
    m_temperature->setAccessibleName(tr("Temperature"));
    m_temperature->setToolTip(
        tr("The temperature the target samples at when served. 0 counts greedy acceptance; above 0 each "
           "proposal counts with its probability of acceptance under the target's distribution at that "
           "temperature, which needs the Target and a capture with the target's last layer."));
    m_drafting->setObjectName(QStringLiteral("acceptanceDraftSampling"));
    for (const auto s : {DraftSampling::Greedy, DraftSampling::Probabilistic}) {
        m_drafting->addItem(QString::fromUtf8(draftSamplingName(s)), static_cast<int>(s));
    }
    m_drafting->setToolTip(
        tr("How the draft picks its tokens at a temperature, as vLLM's draft_sample_method: greedy (its "
           "argmax, vLLM's default) or probabilistic (a sample at the temperature, accepted by rejection "
           "sampling)"));
    m_drafting->setEnabled(false);
    connect(m_temperature, &QDoubleSpinBox::valueChanged, this,
            [this](double t) { m_drafting->setEnabled(t > 0); });
    const auto bf16Kernel = gemm::bf16Target();
    m_bf16Activations->setToolTip(
        tr("Both drafts store every activation as BF16, as vLLM serves a BF16 model (FP32 inside each "
           "operation), and every Linear multiplies BF16 by BF16 (here on %1); off: FP32 throughout")
            .arg(QString::fromUtf8(bf16Kernel.data(), static_cast<qsizetype>(bf16Kernel.size()))));
    m_numericsFloor->setToolTip(
        tr("Also run the BF16 draft under the other numerics on the same anchors: how "
           "often kernel numerics alone change a proposal, the floor under every "
           "change measured here"));

    auto* quantRow = new QWidget(this);
    auto* quantLayout = new QVBoxLayout(quantRow);
    quantLayout->setContentsMargins(0, 0, 0, 0);
    quantLayout->addWidget(m_usePlan);
    auto* checkpointRow = new QHBoxLayout;
    checkpointRow->addWidget(m_useCheckpoint);
    checkpointRow->addWidget(pathRow(m_quantized, {}, tr("Browse…"), quantRow), 1);
    quantLayout->addLayout(checkpointRow);

    auto* numbers = new QHBoxLayout;
    numbers->addWidget(new QLabel(tr("k:"), this));
    numbers->addWidget(m_k);
    numbers->addSpacing(fontMetrics().averageCharWidth() * 2);
    numbers->addWidget(new QLabel(tr("Anchors:"), this));
    numbers->addWidget(m_anchors);
    numbers->addSpacing(fontMetrics().averageCharWidth() * 2);
    numbers->addWidget(new QLabel(tr("Seed:"), this));
    numbers->addWidget(m_seed);
    numbers->addSpacing(fontMetrics().averageCharWidth() * 2);
    numbers->addWidget(m_temperature);
    numbers->addWidget(m_drafting);
    numbers->addSpacing(fontMetrics().averageCharWidth());
    numbers->addWidget(m_bf16Activations);
    numbers->addWidget(m_numericsFloor);
    numbers->addStretch(1);

    auto* form = new QFormLayout;
    form->addRow(tr("Capture:"), pathRow(m_capture, tr("File…"), tr("Folder…"), this));
    form->addRow(tr("Target:"), pathRow(m_target, {}, tr("Browse…"), this));
    auto* reading = new QHBoxLayout;
    reading->addWidget(new QLabel(tr("Layer ids:"), this));
    reading->addWidget(m_layerIds, 1);
    reading->addSpacing(fontMetrics().averageCharWidth() * 2);
    reading->addWidget(new QLabel(tr("Prompt tokens:"), this));
    reading->addWidget(m_promptTokens);
    form->addRow(tr("Capture reading:"), reading);
    form->addRow(tr("Quantized:"), quantRow);
    form->addRow(tr("Sampling:"), numbers);

    m_cancel->setEnabled(false);
    m_sensitivity->setToolTip(
        tr("Quantize one unit of the plan at a time (the rest BF16) on the same anchors "
           "and rank the units by the τ they cost"));
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_run);
    buttons->addWidget(m_cancel);
    buttons->addWidget(m_progress);
    buttons->addWidget(m_sensitivity);
    m_checkCapture->setToolTip(
        tr("Read the capture and list every defect of its hidden states (NaN or Inf, zero rows, rows of one "
           "value), sample by sample, without running a draft"));
    buttons->addWidget(m_checkCapture);
    m_convertCapture->setToolTip(
        tr("Write the capture, whatever wrote it, as one file of the product's own format (FP8 hidden states "
           "dequantized to F32; layer ids and the prompt as read)"));
    buttons->addWidget(m_convertCapture);
    buttons->addStretch(1);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    const int rowHeight = fontMetrics().height() + 6;
    m_positionTable->setObjectName(QStringLiteral("acceptancePositions"));
    m_positionTable->setModel(m_positions);
    setupTable(m_positionTable, rowHeight);
    m_tau->setWordWrap(true);
    m_tau->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_speed->setWordWrap(true);
    m_speed->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_drafterMs->setToolTip(tr("The BF16 drafter's measured time per verify cycle"));
    m_cycleMs->setToolTip(tr("The whole BF16 verify cycle (drafter and verify)"));
    m_savingMs->setToolTip(
        tr("The drafter time the quantized draft saves; by default the drafter time scaled "
           "by the plan's streamed bytes"));
    auto* speedInputs = new QHBoxLayout;
    speedInputs->addWidget(new QLabel(tr("Speed model — drafter:"), this));
    speedInputs->addWidget(m_drafterMs);
    speedInputs->addWidget(new QLabel(tr("cycle:"), this));
    speedInputs->addWidget(m_cycleMs);
    speedInputs->addWidget(new QLabel(tr("saving:"), this));
    speedInputs->addWidget(m_savingMs);
    speedInputs->addStretch(1);
    m_exportRates->setEnabled(false);
    m_exportRates->setToolTip(
        tr("Write the measured per-position acceptance (the quantized draft's when one ran) as vLLM's "
           "synthetic rejection sampler takes it, to time the real quantized draft at this acceptance before "
           "measuring it (docs/acceptance.md shows the vLLM command)."));

    auto* numbersBox = new QWidget(this);
    auto* numbersLayout = new QVBoxLayout(numbersBox);
    numbersLayout->setContentsMargins(0, 0, 0, 0);
    numbersLayout->addWidget(m_positionTable, 1);
    numbersLayout->addWidget(m_tau);
    numbersLayout->addLayout(speedInputs);
    numbersLayout->addWidget(m_speed);
    numbersLayout->addWidget(m_exportRates, 0, Qt::AlignRight);
    auto* results = new QSplitter(Qt::Horizontal, this);
    results->setChildrenCollapsible(false);
    results->addWidget(m_plot);
    results->addWidget(numbersBox);
    results->setStretchFactor(0, 2);
    results->setStretchFactor(1, 3);
    // The bars get about two fifths of the width: at 1200 pixels, room for k = 8 pairs and the legend.
    results->setSizes({fontMetrics().averageCharWidth() * 64, fontMetrics().averageCharWidth() * 96});

    m_unitTable->setObjectName(QStringLiteral("acceptanceUnits"));
    m_unitTable->setModel(m_units);
    setupTable(m_unitTable, rowHeight);
    m_unitTable->horizontalHeader()->setSectionResizeMode(SensitivityModel::Unit, QHeaderView::Stretch);
    m_unitTable->horizontalHeader()->setStretchLastSection(false);
    m_unitTable->setTextElideMode(Qt::ElideMiddle);
    m_useAlpha->setEnabled(false);
    m_useAlpha->setToolTip(
        tr("Weigh each unit's error in the Budget tab's allocator by the acceptance it costs"));
    auto* unitsBox = new QWidget(this);
    auto* unitsLayout = new QVBoxLayout(unitsBox);
    unitsLayout->setContentsMargins(0, 0, 0, 0);
    auto* unitsHeader = new QHBoxLayout;
    unitsHeader->addWidget(new QLabel(tr("Per-unit sensitivity (largest τ loss first):"), unitsBox), 1);
    unitsHeader->addWidget(m_useAlpha);
    unitsLayout->addLayout(unitsHeader);
    unitsLayout->addWidget(m_unitTable, 1);

    auto* split = new QSplitter(Qt::Vertical, this);
    split->setChildrenCollapsible(false);
    split->addWidget(results);
    split->addWidget(unitsBox);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addLayout(buttons);
    layout->addWidget(m_status);
    layout->addWidget(split, 1);

    connect(m_run, &QPushButton::clicked, this, &AcceptancePanel::startRun);
    connect(m_cancel, &QPushButton::clicked, this, &AcceptancePanel::cancel);
    connect(m_sensitivity, &QPushButton::clicked, this, &AcceptancePanel::startSensitivity);
    connect(m_useAlpha, &QPushButton::clicked, this, &AcceptancePanel::useAsAlpha);
    connect(m_exportRates, &QPushButton::clicked, this, [this] { exportRates(); });
    connect(m_checkCapture, &QPushButton::clicked, this, &AcceptancePanel::checkCapture);
    connect(m_convertCapture, &QPushButton::clicked, this, &AcceptancePanel::convertCapture);
    connect(m_runner, &AcceptanceRunner::progressChanged, this,
            [this](double fraction) { m_progress->setFraction(fraction); });
    connect(m_runner, &AcceptanceRunner::finished, this, &AcceptancePanel::onFinished);
    for (auto* spin : {m_drafterMs, m_cycleMs, m_savingMs}) {
        connect(spin, &QDoubleSpinBox::valueChanged, this, &AcceptancePanel::updateSpeed);
    }
    // Another draft: results and a running job belong to the old one.
    connect(m_controller->document(), &Document::snapshotChanged, this, [this] {
        m_runner->cancel();
        clearResults();
        const auto snapshot = m_controller->document()->snapshot();
        switchDraftInputs(snapshot ? QFileInfo(snapshot->folder).canonicalFilePath() : QString());
        setStatus(tr("Choose a capture of the target's hidden states and press Run."), false);
    });
    clearResults();
    setStatus(tr("Open a draft, choose a capture of the target's hidden states and press Run."), false);
}

AcceptancePanel::~AcceptancePanel() = default;

QString AcceptancePanel::statusText() const
{
    return m_status->text();
}

QString AcceptancePanel::tauText() const
{
    return m_tau->text();
}

QString AcceptancePanel::speedText() const
{
    return m_speed->text();
}

std::optional<AcceptanceJob> AcceptancePanel::jobFromInputs(QString* why) const
{
    const auto snapshot = m_controller->document()->snapshot();
    if (!snapshot || !snapshot->checkpoint) {
        *why = tr("Open a draft checkpoint first: it is the BF16 side of the comparison.");
        return std::nullopt;
    }
    const QString capture = m_capture->text().trimmed();
    if (capture.isEmpty()) {
        *why = tr("Choose a capture: a capture file or a folder of hs_*.safetensors.");
        return std::nullopt;
    }
    if (!QFileInfo::exists(capture)) {
        *why = tr("%1: no such file or folder").arg(QDir::toNativeSeparators(capture));
        return std::nullopt;
    }
    AcceptanceJob job;
    job.draft = toPath(snapshot->folder);
    job.capture = toPath(capture);
    const auto reading = captureReadOptions(why);
    if (!reading) {
        return std::nullopt;
    }
    job.captureOptions = *reading;
    if (const QString target = m_target->text().trimmed(); !target.isEmpty()) {
        if (!QFileInfo::exists(target)) {
            *why = tr("%1: no such target checkpoint").arg(QDir::toNativeSeparators(target));
            return std::nullopt;
        }
        job.target = toPath(target);
    }
    if (m_useCheckpoint->isChecked()) {
        const QString quantized = m_quantized->text().trimmed();
        if (quantized.isEmpty() || !QFileInfo::exists(quantized)) {
            *why = quantized.isEmpty()
                       ? tr("Choose the quantized checkpoint, or compare with the Plan tab's plan.")
                       : tr("%1: no such checkpoint").arg(QDir::toNativeSeparators(quantized));
            return std::nullopt;
        }
        job.quantized = toPath(quantized);
    } else {
        const auto plan = m_controller->plan();
        if (!plan || !plan->errors.empty()) {
            *why = tr("The plan has errors: fix them in the Plan tab first.");
            return std::nullopt;
        }
        job.plan = m_controller->planOptions();
    }
    job.options.k = m_k->value();
    job.options.anchorCount = m_anchors->value();
    job.options.seed = static_cast<std::uint64_t>(m_seed->value());
    job.options.temperature = m_temperature->value();
    job.options.drafting = static_cast<DraftSampling>(m_drafting->currentData().toInt());
    job.numerics = m_bf16Activations->isChecked() ? ForwardNumerics::Bf16Activations : ForwardNumerics::Fp32;
    job.numericsFloor = m_numericsFloor->isChecked();
    return job;
}

void AcceptancePanel::startRun()
{
    QString why;
    const auto job = jobFromInputs(&why);
    if (!job) {
        setStatus(why, true);
        return;
    }
    clearResults();
    m_progress->start();
    setRunning(true);
    m_runningJob = *job;
    m_runner->start(*job, AcceptanceRunner::Kind::Acceptance);
    jobsChanged();
    setStatus(tr("Running both drafts on %1…").arg(QFileInfo(m_capture->text().trimmed()).fileName()), false);
}

void AcceptancePanel::startSensitivity()
{
    if (m_useCheckpoint->isChecked()) {
        setStatus(
            tr("The per-unit sensitivity quantizes the Plan tab's plan one unit at a time: choose the plan "
               "as the quantized side."),
            true);
        return;
    }
    QString why;
    const auto job = jobFromInputs(&why);
    if (!job) {
        setStatus(why, true);
        return;
    }
    m_units->resetData({});
    m_useAlpha->setEnabled(false);
    m_progress->start();
    setRunning(true);
    m_runner->start(*job, AcceptanceRunner::Kind::Sensitivity);
    jobsChanged();
    setStatus(tr("Quantizing one unit of the plan at a time…"), false);
}

void AcceptancePanel::cancel()
{
    m_runner->cancel();
    m_conversion.cancel();
    m_captureCheck.cancel();
}

bool AcceptancePanel::isRunning() const
{
    return m_runner->isRunning() || m_conversion.isRunning() || m_captureCheck.isRunning();
}

void AcceptancePanel::useAsAlpha()
{
    if (m_units->rowCount() == 0) {
        return;
    }
    Q_EMIT alphaRulesRequested(m_units->alphaRules(),
                               tr("acceptance sensitivity (%n unit(s))", nullptr, m_units->rowCount()));
    Q_EMIT statusMessage(tr("The Budget tab's α now follows the per-unit acceptance sensitivity."));
}

void AcceptancePanel::onFinished(const AcceptanceJobResult& result)
{
    setRunning(false);
    jobsChanged();
    if (!result.error.isEmpty()) {
        m_progress->clear();
        setStatus(result.error, true);
        return;
    }
    if (result.units) {
        m_progress->finish();
        m_units->resetData(*result.units);
        m_useAlpha->setEnabled(!result.units->empty());
        setStatus(
            tr("Per-unit sensitivity: %n unit(s) ranked.", nullptr, static_cast<int>(result.units->size())),
            false);
        return;
    }
    if (!result.run) {
        m_progress->clear();
        setStatus(tr("Cancelled."), false);
        return;
    }
    m_progress->finish();
    m_result = result.run;
    m_resultJob = m_runningJob;
    m_exportRates->setEnabled(true);
    const auto& run = *m_result;
    const auto& s = run.summary;
    const QString quantName = QString::fromStdString(run.quantizedName);
    m_positions->resetData(s);
    m_plot->setSummary(s, quantName);
    QString tau = tr("τ(%1) BF16 %2").arg(s.k).arg(QLocale().toString(s.tauBase, 'f', 4));
    if (s.paired) {
        tau += tr(", %1 %2, paired change %3 [%4, %5]")
                   .arg(quantName, QLocale().toString(s.tauQuant, 'f', 4), signedFixed(s.tauDelta),
                        signedFixed(s.tauDeltaLow), signedFixed(s.tauDeltaHigh));
    }
    if (m_resultJob && m_resultJob->options.temperature > 0) {
        tau += tr(" at T = %1 (%2 drafting)")
                   .arg(QLocale().toString(m_resultJob->options.temperature, 'f', 2))
                   .arg(QString::fromUtf8(draftSamplingName(m_resultJob->options.drafting)));
    }
    tau += tr(" — %n anchor(s)", nullptr, static_cast<int>(s.anchors)) +
           tr(" of %1 eligible (%2).").arg(run.eligibleAnchors).arg(QString::fromStdString(run.spec.archId));
    if (const auto& f = run.numericsFloor) {
        tau += QLatin1Char('\n') +
               tr("Numerics floor: with %1 activations the BF16 draft changes its first proposal at %2 % of "
                  "the anchors, any of its %3 at %4 %; τ change %5 [%6, %7].")
                   .arg(f->other == ForwardNumerics::Fp32 ? tr("FP32") : tr("BF16"))
                   .arg(QLocale().toString(100 * f->firstDiffers, 'f', 2))
                   .arg(s.k)
                   .arg(QLocale().toString(100 * f->anyDiffers, 'f', 2))
                   .arg(signedFixed(f->summary.tauDelta), signedFixed(f->summary.tauDeltaLow),
                        signedFixed(f->summary.tauDeltaHigh));
    }
    m_tau->setText(tau);
    updateSpeed();
    // What makes the numbers doubtful comes with them: the capture's lesser defects, and what a BF16 draft
    // accepting almost nothing usually means.
    QStringList notes;
    for (const auto& w : run.captureWarnings) {
        notes << tr("Warning: %1: sample %2, %3: %4")
                     .arg(QString::fromStdString(w.file))
                     .arg(w.sample)
                     .arg(QString::fromStdString(w.field), QString::fromStdString(w.message));
    }
    if (run.layerIdProbe && !run.layerIdProbe->advice.empty()) {
        notes << layerIdAdvice(*run.layerIdProbe);
    }
    if (!run.lowAcceptance.empty()) {
        notes << tr("Note: %1.").arg(QString::fromStdString(run.lowAcceptance));
    }
    if (!run.samplingNote.empty()) {
        notes << tr("Note: %1.").arg(QString::fromStdString(run.samplingNote));
    }
    if (run.promptUnknown) {
        notes << promptUnknownAdvice();
    }
    setStatus(notes.isEmpty() ? tr("Done.") : notes.join(QLatin1Char('\n')), false);
}

void AcceptancePanel::updateSpeed()
{
    if (!m_result || !m_result->summary.paired) {
        m_speed->setText(m_result ? tr("The speed model needs a quantized draft to compare.") : QString());
        return;
    }
    if (m_drafterMs->value() <= 0 || m_cycleMs->value() <= 0) {
        m_speed->setText(tr("Enter the BF16 drafter time and verify cycle (e.g. from the Benchmarks tab) to "
                            "predict the decode tok/s change."));
        return;
    }
    AcceptanceSpeedInputs inputs;
    inputs.drafterMs = m_drafterMs->value();
    inputs.cycleMs = m_cycleMs->value();
    if (m_savingMs->value() > 0) {
        inputs.savingMs = m_savingMs->value();
    }
    inputs.streamedBefore = m_result->streamedBefore;
    inputs.streamedAfter = m_result->streamedAfter;
    try {
        const auto speed = predictAcceptanceSpeed(m_result->summary, inputs);
        m_speed->setText(tr("Predicted decode tok/s: %1 with the measured τ [%2, %3]; %4 with acceptance "
                            "unchanged (saving %5 ms of %6 ms per cycle).")
                             .arg(percent(speed.changeMeasured), percent(speed.changeLow),
                                  percent(speed.changeHigh), percent(speed.changeUnchanged),
                                  QLocale().toString(speed.savingMs, 'f', 2),
                                  QLocale().toString(speed.cycleMs, 'f', 2)));
    } catch (const std::invalid_argument& e) {
        m_speed->setText(tr("Speed model: %1.").arg(QString::fromStdString(e.what())));
    }
}

std::optional<CaptureReadOptions> AcceptancePanel::captureReadOptions(QString* why) const
{
    CaptureReadOptions options;
    const auto items =
        m_layerIds->text().split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts);
    for (const auto& item : items) {
        bool ok = false;
        const int id = item.toInt(&ok);
        if (!ok || id < 0) {
            *why = tr("Layer ids: '%1' is not a layer id (give ids like 1, 3, 5, 6).").arg(item);
            return std::nullopt;
        }
        options.layerIds.push_back(id);
    }
    if (m_promptTokens->value() >= 0) {
        options.promptTokens = m_promptTokens->value();
    }
    return options;
}

std::optional<AcceptanceJob> AcceptancePanel::captureJob(QString* why) const
{
    const QString path = m_capture->text().trimmed();
    if (path.isEmpty()) {
        *why = tr("Give a capture file or folder first.");
        return std::nullopt;
    }
    const auto options = captureReadOptions(why);
    if (!options) {
        return std::nullopt;
    }
    const auto snapshot = m_controller->document()->snapshot();
    AcceptanceJob job;
    job.draft = snapshot && snapshot->checkpoint ? toPath(snapshot->folder) : std::filesystem::path();
    job.capture = toPath(path);
    job.captureOptions = *options;
    if (const QString target = m_target->text().trimmed(); !target.isEmpty()) {
        job.target = toPath(target);
    }
    return job;
}

std::function<HiddenStateCapture()> AcceptancePanel::captureOpener(QString* why) const
{
    const auto job = captureJob(why);
    if (!job) {
        return {};
    }
    return [job = *job] {
        return job.draft.empty() ? HiddenStateCapture::open(job.capture, job.captureOptions)
                                 : openJobCapture(job);
    };
}

void AcceptancePanel::convertCapture()
{
    QString why;
    const auto open = captureOpener(&why);
    if (!open) {
        setStatus(why, true);
        return;
    }
    const QFileInfo source(m_capture->text().trimmed());
    const QString out = QFileDialog::getSaveFileName(
        this, tr("Convert the capture to"),
        QDir(source.isDir() ? source.absolutePath() : source.absolutePath())
            .filePath(source.completeBaseName() + QStringLiteral("-converted.safetensors")),
        tr("Safetensors (*.safetensors)"));
    if (out.isEmpty()) {
        return;
    }
    m_progress->start();
    m_convertCapture->setEnabled(false);
    m_conversion.start([open, out](const ProgressFn& progress) {
        spark::convertCapture(open(), toPath(out), progress);
        return CaptureConversion{out, {}};
    });
    jobsChanged();
    setStatus(tr("Converting %1…").arg(source.fileName()), false);
}

void AcceptancePanel::checkCapture()
{
    QString why;
    const auto job = captureJob(&why);
    if (!job) {
        setStatus(why, true);
        return;
    }
    const QString path = m_capture->text().trimmed();
    m_progress->start();
    m_checkCapture->setEnabled(false);
    // The review a run makes too (health, and with the open draft the layer-id probe): the check never
    // calls a capture clean that the run then warns about.
    m_captureCheck.start([job = *job](const ProgressFn& progress) {
        CaptureCheck result;
        result.review = reviewCapture(job, progress);
        return result;
    });
    jobsChanged();
    setStatus(tr("Checking %1…").arg(QFileInfo(path).fileName()), false);
}

void AcceptancePanel::onCaptureChecked(const CaptureCheck& result)
{
    m_checkCapture->setEnabled(true);
    jobsChanged();
    if (!result.error.isEmpty() || !result.review) {
        m_progress->clear();
        setStatus(result.error.isEmpty() ? tr("Cancelled.") : result.error, !result.error.isEmpty());
        return;
    }
    m_progress->finish();
    const auto& info = result.review->info;
    const auto& health = result.review->health;
    QString ids;
    for (const int id : info.layerIds) {
        ids += (ids.isEmpty() ? QString() : QStringLiteral(", ")) + QString::number(id);
    }
    QStringList lines{tr("%1: %2 samples, %3 tokens, layer ids [%4], hidden size %5.")
                          .arg(QString::fromStdString(info.path.filename().string()))
                          .arg(info.samples)
                          .arg(info.tokens)
                          .arg(ids)
                          .arg(info.hiddenSize)};
    if (health.findings.empty()) {
        lines << tr("Every row of every layer is finite, and none is zero or constant.");
    }
    // The first findings in full; a capture broken everywhere would otherwise fill the tab.
    constexpr std::size_t kShown = 6;
    for (std::size_t i = 0; i < std::min(kShown, health.findings.size()); ++i) {
        const auto& f = health.findings[i];
        lines << tr("%1: sample %2, %3: %4")
                     .arg(QString::fromLatin1(severityName(f.severity)))
                     .arg(f.sample)
                     .arg(QString::fromStdString(f.field), QString::fromStdString(f.message));
    }
    if (health.findings.size() > kShown) {
        lines << tr("… and %n more (sparkulator-cli capture check lists them all).", nullptr,
                    static_cast<int>(health.findings.size() - kShown));
    }
    if (const auto& probe = result.review->layerIds; probe && !probe->advice.empty()) {
        lines << layerIdAdvice(*probe);
    }
    if (info.promptUnknown) {
        lines << promptUnknownAdvice();
    }
    setStatus(lines.join(QLatin1Char('\n')), health.hasErrors());
}

bool AcceptancePanel::exportRates(const QString& path)
{
    if (!m_result || !m_resultJob) {
        return false;
    }
    const QString file =
        path.isEmpty()
            ? QFileDialog::getSaveFileName(this, tr("Export Acceptance Rates"),
                                           QStringLiteral("acceptance-rates.json"), tr("JSON (*.json)"))
            : path;
    if (file.isEmpty()) {
        return false;
    }
    try {
        const auto json = acceptanceRatesJson(*m_resultJob, *m_result);
        replaceTextFile(file.toStdString(), json.dump(2) + "\n");
        setStatus(tr("Wrote %1 (%2 rates, k = %3).")
                      .arg(file, QString::fromStdString(json["source"]["rates_of"].get<std::string>()))
                      .arg(m_result->summary.k),
                  false);
        return true;
    } catch (const std::exception& e) {
        setStatus(QString::fromStdString(e.what()), true);
        return false;
    }
}

void AcceptancePanel::switchDraftInputs(const QString& folder)
{
    if (folder == m_draftFolder) {
        return;
    }
    if (!m_draftFolder.isEmpty()) {
        m_inputsByDraft.insert(m_draftFolder, {m_capture->text(), m_target->text(), m_layerIds->text(),
                                               m_promptTokens->value()});
    }
    m_draftFolder = folder;
    const auto inputs = m_inputsByDraft.value(folder);
    m_capture->setText(inputs.capture);
    m_target->setText(inputs.target);
    m_layerIds->setText(inputs.layerIds);
    m_promptTokens->setValue(inputs.promptTokens);
}

void AcceptancePanel::setInputsForDraft(const QString& draftFolder, const QString& capture,
                                        const QString& target)
{
    const auto folder = QFileInfo(draftFolder).canonicalFilePath();
    if (folder == m_draftFolder) {
        m_capture->setText(capture);
        m_target->setText(target);
    } else {
        m_inputsByDraft.insert(folder, {capture, target});
    }
}

void AcceptancePanel::clearResults()
{
    m_result.reset();
    m_resultJob.reset();
    m_exportRates->setEnabled(false);
    m_positions->clear();
    m_plot->clear();
    m_units->resetData({});
    m_useAlpha->setEnabled(false);
    m_tau->setText(tr("τ(k) = 1 + Σ a_i: tokens per verify cycle under greedy verification."));
    m_speed->clear();
    m_progress->clear();
}

void AcceptancePanel::setRunning(bool running)
{
    m_run->setEnabled(!running);
    m_sensitivity->setEnabled(!running);
}

void AcceptancePanel::jobsChanged()
{
    m_cancel->setEnabled(isRunning());
    Q_EMIT runningChanged();
}

void AcceptancePanel::setStatus(const QString& text, bool error)
{
    m_status->setText(text);
    // An error keeps the palette's own colours (dark mode); the bold weight marks it.
    QFont font = m_status->font();
    font.setBold(error);
    m_status->setFont(font);
    if (error) {
        Q_EMIT statusMessage(text);
    }
}

void AcceptancePanel::dragEnterEvent(QDragEnterEvent* event)
{
    if (isCheckpointPath(droppedLocalPath(event->mimeData()))) {
        event->acceptProposedAction();
    } else {
        event->ignore();
    }
}

void AcceptancePanel::dropEvent(QDropEvent* event)
{
    // On this tab a dropped file or folder is a capture, not a draft to open.
    const QString path = droppedLocalPath(event->mimeData());
    if (!isCheckpointPath(path)) {
        event->ignore();
        return;
    }
    event->acceptProposedAction();
    m_capture->setText(path);
}

} // namespace spark
