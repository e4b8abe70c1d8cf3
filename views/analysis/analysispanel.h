#pragma once

#include <QWidget>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;

namespace spark {

class AnalysisController;

/// @brief The analyze controls of the main toolbar: scheme (any quantizing scheme), backend, Analyze, a
/// progress bar with the time left, and Cancel. The analysis itself and its results are the
/// AnalysisController's; the panel turns the backend choice into a device and shows the progress.
class AnalysisPanel : public QWidget
{
    Q_OBJECT

  public:
    explicit AnalysisPanel(AnalysisController* controller, QWidget* parent = nullptr);

    /// @brief "about 12 s left" while running, empty otherwise.
    QString timeLeftText() const;

    QComboBox* schemeBox() const { return m_scheme; }
    QComboBox* backendBox() const { return m_backend; }

  public Q_SLOTS:
    /// @brief Analyzes the open document with the selected scheme on the selected backend (F5).
    void analyze();

  private:
    void onProgress(double fraction, qint64 msLeft);
    void setRunning(bool running);

    AnalysisController* m_controller;
    QComboBox* m_scheme;
    QComboBox* m_backend;
    QPushButton* m_analyze;
    QProgressBar* m_progress;
    QLabel* m_eta;
    QPushButton* m_cancel;
};

} // namespace spark
