#pragma once

#include <QLabel>

namespace spark {

/// @brief A one-line label that elides its text to the width it gets, with the full text as its tooltip.
/// Used where a wrapped paragraph would take lines from the tables below it (the Plan tab's preset
/// description).
class ElidingLabel : public QLabel
{
  public:
    explicit ElidingLabel(QWidget* parent = nullptr);

    void setFullText(const QString& text);
    QString fullText() const { return m_full; }

  protected:
    void resizeEvent(QResizeEvent* event) override;

  private:
    void elide();

    QString m_full;
};

} // namespace spark
