#pragma once

#include "views/bench/benchplot.h"

#include <QWidget>
#include <vector>

namespace spark {

/// @brief The key of the Benchmarks tab's plots, shown once above them: each arm keeps its colour in every
/// plot, so one key says it for all four and leaves their height to the data. Entries flow into as many
/// lines as the width needs. Exported plots carry their own legends.
class BenchKey : public QWidget
{
    Q_OBJECT

  public:
    explicit BenchKey(QWidget* parent = nullptr);

    /// @brief Shows the entries of @p report (null: none).
    void setReport(const BenchReport* report);
    const std::vector<BenchKeyEntry>& entries() const { return m_entries; }

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

  protected:
    void paintEvent(QPaintEvent* event) override;
    void changeEvent(QEvent* event) override;

  private:
    /// The top-left corner of each entry laid out at @p width.
    std::vector<QPoint> layoutAt(int width) const;
    int entryWidth(const BenchKeyEntry& entry) const;

    const BenchReport* m_report = nullptr;
    std::vector<BenchKeyEntry> m_entries;
};

} // namespace spark
