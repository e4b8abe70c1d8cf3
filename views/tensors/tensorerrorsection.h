#pragma once

#include "views/tensors/tensorselection.h"

#include <QWidget>

class QLabel;

namespace spark {

class AnalysisController;
struct TensorQuantResult;
class HistogramPlot;

/// @brief The detail panel's "Quantization error" section for the current tensor: rel./max/p95 error
/// and SNR from analyze, or why there are none (NaN/Inf, not a 2-D weight, not analyzed yet), and histograms
/// of the scaled weights and of the error in units of the group scale. Plots come last, when the tensor's
/// analysis arrives. A module shows its weight; a layer its worst tensor.
class TensorErrorSection : public QWidget
{
    Q_OBJECT

  public:
    explicit TensorErrorSection(AnalysisController* analysis, QWidget* parent = nullptr);

    void setSelection(const TensorSelection& selection);
    /// @brief Shows tensor @p tensor (empty: nothing).
    void setTensor(const QString& tensor);

    QString statsText() const;
    HistogramPlot* weightPlot() const { return m_weights; }
    HistogramPlot* errorPlot() const { return m_errors; }

  private:
    void update();
    void showGroup();
    /// "W8A16" or "W4A16 · mse": what @p result was measured under.
    QString measuredText(const TensorQuantResult& result) const;

    AnalysisController* m_analysis;
    TensorSelection m_selection;
    QLabel* m_stats;
    HistogramPlot* m_weights;
    HistogramPlot* m_errors;
};

} // namespace spark
