#pragma once

#include <QWidget>

class QLabel;

namespace spark {

class AnalysisPanel;
class HistogramPlot;

/// @brief The detail panel's "Quantization error" section for the current tensor: rel./max/p95 error
/// and SNR from analyze, or why there are none (NaN/Inf), and histograms of the scaled weights and of the
/// error in units of the group scale. Plots come last, when the tensor's analysis arrives.
class TensorErrorSection : public QWidget
{
    Q_OBJECT

  public:
    explicit TensorErrorSection(AnalysisPanel* analysis, QWidget* parent = nullptr);

    void setTensor(const QString& tensor);

    QString statsText() const;
    HistogramPlot* weightPlot() const { return m_weights; }
    HistogramPlot* errorPlot() const { return m_errors; }

  private:
    void update();

    AnalysisPanel* m_analysis;
    QString m_tensor;
    QLabel* m_stats;
    HistogramPlot* m_weights;
    HistogramPlot* m_errors;
};

} // namespace spark
