#include "views/shared/elidinglabel.h"

namespace spark {

ElidingLabel::ElidingLabel(QWidget* parent) : QLabel(parent)
{
    // The label takes the width the layout gives it: its (elided) text never asks for more.
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
}

void ElidingLabel::setFullText(const QString& text)
{
    m_full = text;
    setToolTip(text);
    elide();
}

void ElidingLabel::resizeEvent(QResizeEvent* event)
{
    QLabel::resizeEvent(event);
    elide();
}

void ElidingLabel::elide()
{
    setText(fontMetrics().elidedText(m_full, Qt::ElideRight, contentsRect().width()));
}

} // namespace spark
