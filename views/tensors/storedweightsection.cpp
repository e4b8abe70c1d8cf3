#include "views/tensors/storedweightsection.h"

#include "core/audit/checker.h"
#include "core/io/checkpoint.h"
#include "core/quant/errorstats.h"
#include "views/document/document.h"
#include "views/tensors/histogramplot.h"

#include <QLabel>
#include <QLocale>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

namespace spark {

namespace {

constexpr std::size_t kBins = 64;
constexpr std::uint64_t kBlocks = 16; ///< row blocks sampled when a module is larger than kMaxValues

/// The module's dequantized rows, sampled in evenly spaced blocks when it holds more than @p maxValues
/// weights, and their histogram over [min, max]. Runs in a worker thread; reads through pread only.
StoredWeightSection::Result decodeModule(const Checkpoint& checkpoint, const QuantizedCheckpoint& view,
                                         const AuditedModule& module, std::uint64_t maxValues)
{
    StoredWeightSection::Result result;
    const auto decoder = makeDecoder(checkpoint, view, module);
    if (!decoder) {
        throw std::invalid_argument(module.module.name + ": its tensors do not fit " + module.scheme);
    }
    const std::uint64_t rows = decoder->rows();
    const std::uint64_t cols = std::max<std::uint64_t>(1, decoder->cols());
    const std::uint64_t align = std::max<std::uint64_t>(1, decoder->rowAlignment());
    result.rows = rows;
    result.cols = decoder->cols();
    const std::uint64_t budgetRows = std::max<std::uint64_t>(align, maxValues / cols);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> blocks; // first row, row count
    if (budgetRows >= rows) {
        blocks.emplace_back(0, rows);
    } else {
        const std::uint64_t blockRows = std::max(align, budgetRows / kBlocks / align * align);
        const std::uint64_t count = std::max<std::uint64_t>(1, budgetRows / blockRows);
        for (std::uint64_t i = 0; i < count; ++i) {
            const std::uint64_t first = rows * i / count / align * align;
            if (!blocks.empty() && first < blocks.back().first + blocks.back().second) {
                continue;
            }
            blocks.emplace_back(first, std::min(blockRows, rows - first));
        }
    }
    std::uint64_t total = 0;
    for (const auto& [first, count] : blocks) {
        total += count * cols;
    }
    std::vector<float> values(static_cast<std::size_t>(total));
    std::size_t at = 0;
    for (const auto& [first, count] : blocks) {
        decoder->decode(first, static_cast<std::size_t>(count), values.data() + at);
        at += static_cast<std::size_t>(count * cols);
        result.rowsDecoded += count;
    }

    double lo = std::numeric_limits<double>::infinity();
    double hi = -lo;
    double sumAbs = 0;
    for (const float v : values) {
        if (!std::isfinite(v)) {
            ++result.nonFinite;
            continue;
        }
        lo = std::min(lo, static_cast<double>(v));
        hi = std::max(hi, static_cast<double>(v));
        sumAbs += std::abs(static_cast<double>(v));
        ++result.values;
    }
    if (result.values == 0) {
        return result;
    }
    if (hi <= lo) { // every weight equal: one bin around it
        const double pad = std::max(std::abs(lo) * 1e-3, 1e-6);
        lo -= pad;
        hi += pad;
    }
    result.meanAbs = sumAbs / static_cast<double>(result.values);
    result.histogram.lo = lo;
    result.histogram.hi = hi;
    result.histogram.counts.assign(kBins, 0);
    const double scale = static_cast<double>(kBins) / (hi - lo);
    for (const float v : values) {
        if (std::isfinite(v)) {
            const auto bin = static_cast<std::size_t>((static_cast<double>(v) - lo) * scale);
            ++result.histogram.counts[std::min(bin, kBins - 1)];
        }
    }
    return result;
}

} // namespace

StoredWeightSection::StoredWeightSection(Document* document, QWidget* parent)
    : QWidget(parent), m_document(document),
      m_job(
          this, [](double) {},
          [this](const Result& result) {
              if (!result.module.isEmpty()) { // empty: dropped for another selection
                  showResult(result);
              }
          })
{
    m_scheme = new QLabel(this);
    m_scheme->setObjectName(QStringLiteral("storedScheme"));
    m_scheme->setWordWrap(true);
    m_scheme->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_stats = new QLabel(this);
    m_stats->setObjectName(QStringLiteral("storedWeightStats"));
    m_stats->setWordWrap(true);
    m_stats->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_stats->setToolTip(tr("The module's weights as compressed-tensors dequantizes them (what vLLM computes "
                           "with). Modules larger than %1 weights are sampled in evenly spaced row blocks.")
                            .arg(QLocale().toString(static_cast<qulonglong>(kMaxValues))));
    m_plot = new HistogramPlot(tr("dequantized weight"), this);
    m_plot->setObjectName(QStringLiteral("dequantizedHistogram"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_scheme);
    layout->addWidget(m_stats);
    layout->addWidget(m_plot);
    connect(m_document, &Document::snapshotChanged, this, [this] { setTensor({}); });
    setTensor({});
}

// A running decode holds the snapshot (and so the checkpoint) it started from; its watcher is our child
// and goes with us, so its result is dropped.
QString StoredWeightSection::schemeText() const
{
    return m_scheme->text();
}

QString StoredWeightSection::statsText() const
{
    return m_stats->text();
}

void StoredWeightSection::setApplicable(bool applicable)
{
    // The detail panel wraps each section in a titled box: a BF16 draft has nothing to show here.
    // Until it is placed in its box there is nothing to hide (hiding the section itself would stick).
    if (QWidget* box = parentWidget()) {
        box->setVisible(applicable);
    }
}

void StoredWeightSection::setTensor(const QString& tensor)
{
    const auto snapshot = m_document->snapshot();
    const auto report = snapshot ? snapshot->audit : nullptr;
    setApplicable(report != nullptr);
    const AuditedModule* module =
        report && !tensor.isEmpty() ? report->view.moduleOfTensorName(tensor.toStdString()) : nullptr;
    if (!module) {
        m_job.cancel();
        m_module.clear();
        m_scheme->setText(report ? tr("Select a tensor of a module to see how it is stored.") : QString());
        m_stats->clear();
        m_plot->setHistogram(nullptr);
        m_plot->hide();
        return;
    }
    const QString moduleName = QString::fromStdString(module->module.name);
    QString scheme = tr("%1 is stored as %2").arg(moduleName, QString::fromStdString(module->scheme));
    if (module->bitsPerWeight > 0) {
        scheme += tr(" (%1 bits per weight)").arg(QLocale().toString(module->bitsPerWeight, 'f', 2));
    }
    if (module->quantizedOnDisk) {
        scheme += module->vllmQuantizes()
                      ? tr("; vLLM loads it quantized.")
                      : tr("; vLLM does not load it quantized (see the Plan tab's findings).");
    }
    m_scheme->setText(scheme);
    if (moduleName == m_module) {
        return; // same module: its histogram is shown or on its way
    }
    m_module = moduleName;
    m_plot->setHistogram(nullptr);
    if (!module->quantizedOnDisk) {
        m_job.cancel();
        m_stats->setText(tr("Not quantized: the Quantization error section measures its weights."));
        m_plot->hide();
        return;
    }
    if (!module->decodable()) {
        m_job.cancel();
        m_stats->setText(tr("Cannot dequantize: its tensors do not fit its config group (see the Plan tab's "
                            "findings)."));
        m_plot->hide();
        return;
    }
    m_stats->setText(tr("Dequantizing…"));
    m_plot->show();
    const std::string name = module->module.name;
    m_job.start([snapshot, report, name](const ProgressFn&) {
        Result result;
        try {
            // The snapshot keeps the checkpoint and the report alive for as long as this runs.
            if (const auto* m = report->view.find(name)) {
                result = decodeModule(*snapshot->checkpoint, report->view, *m, kMaxValues);
            }
        } catch (const std::exception& e) {
            result.error = QString::fromStdString(e.what());
        }
        result.module = QString::fromStdString(name);
        return result;
    });
}

void StoredWeightSection::showResult(const Result& result)
{
    if (!result.error.isEmpty()) {
        m_stats->setText(tr("Cannot dequantize: %1").arg(result.error));
        m_plot->hide();
        Q_EMIT moduleDecoded(result.module);
        return;
    }
    const QLocale locale;
    QString text = result.rowsDecoded < result.rows
                       ? tr("%1 of %2 rows sampled")
                             .arg(locale.toString(static_cast<qulonglong>(result.rowsDecoded)),
                                  locale.toString(static_cast<qulonglong>(result.rows)))
                       : tr("all %1 rows").arg(locale.toString(static_cast<qulonglong>(result.rows)));
    text += tr(" · %1 weights · range [%2, %3] · mean |w| %4")
                .arg(locale.toString(static_cast<qulonglong>(result.values)),
                     QString::number(result.histogram.lo, 'g', 4),
                     QString::number(result.histogram.hi, 'g', 4), QString::number(result.meanAbs, 'g', 4));
    if (result.nonFinite > 0) {
        text +=
            tr(" · %n value(s) overflow to ±Inf", nullptr,
               static_cast<int>(std::min<std::uint64_t>(result.nonFinite, std::numeric_limits<int>::max())));
    }
    m_stats->setText(text);
    m_plot->setHistogram(result.histogram.counts.empty() ? nullptr : &result.histogram);
    m_plot->show();
    Q_EMIT moduleDecoded(result.module);
}

} // namespace spark
