#pragma once

#include "core/quant/errorstats.h"
#include "views/shared/backgroundjob.h"

#include <QWidget>
#include <cstdint>

class QLabel;

namespace spark {

class Document;
class HistogramPlot;

/// @brief The detail panel's "Stored weights" section for a tensor of an already-quantized checkpoint: the
/// scheme its module is stored as and a histogram of the module's dequantized weights, decoded in the
/// background (one module at a time, at most kMaxValues weights sampled in evenly spaced row blocks, so
/// memory stays bounded whatever the module's size). Hidden for BF16 drafts.
class StoredWeightSection : public QWidget
{
    Q_OBJECT

  public:
    /// Weights decoded for one histogram at most (4 MiB of floats).
    static constexpr std::uint64_t kMaxValues = std::uint64_t{1} << 20;

    explicit StoredWeightSection(Document* document, QWidget* parent = nullptr);

    void setTensor(const QString& tensor);

    /// @brief The module whose weights are shown (or being decoded), empty when none.
    QString module() const { return m_module; }
    QString schemeText() const;
    QString statsText() const;
    HistogramPlot* weightPlot() const { return m_plot; }
    bool isDecoding() const { return m_job.isRunning(); }

    /// What a decode produced: the module's histogram and figures, or why there are none; an empty module
    /// when another selection dropped it.
    struct Result
    {
        QString module;
        FixedHistogram histogram;
        std::uint64_t rows = 0, cols = 0;
        std::uint64_t rowsDecoded = 0;
        std::uint64_t values = 0;    ///< finite values in the histogram
        std::uint64_t nonFinite = 0; ///< ±Inf/NaN (compressed-tensors overflows)
        double meanAbs = 0;
        QString error;
    };

  Q_SIGNALS:
    /// The histogram of @p module is shown (or its decode failed: statsText() says why).
    void moduleDecoded(const QString& module);

  private:
    void showResult(const Result& result);
    void setApplicable(bool applicable);

    Document* m_document;
    BackgroundJob<Result> m_job;
    QString m_module;
    QLabel* m_scheme;
    QLabel* m_stats;
    HistogramPlot* m_plot;
};

} // namespace spark
