#pragma once

#include <QElapsedTimer>
#include <QProgressBar>

namespace spark {

/// @brief The progress of one long job: the share done and, once it can be told, about how long is left
/// (from the pace so far). A job that is cancelled or fails goes back to empty, not to where it stopped.
class JobProgressBar : public QProgressBar
{
    Q_OBJECT

  public:
    explicit JobProgressBar(QWidget* parent = nullptr);

    /// @brief A job starts: empty, and the clock of its pace starts.
    void start();
    /// @brief @p fraction (0..1) of the job is done.
    void setFraction(double fraction);
    /// @brief The job ended with its result: full.
    void finish();
    /// @brief The job was cancelled or failed: empty.
    void clear();

  private:
    QElapsedTimer m_clock;
};

} // namespace spark
