#pragma once

// qcustomplot.h uses Qt's lower-case keywords (signals, slots, emit, foreach), which QT_NO_KEYWORDS
// removes from our code. Map them to the Q_ macros for this include only, so the project keeps
// QT_NO_KEYWORDS everywhere else. Include this instead of <qcustomplot.h>.
#if defined(QT_NO_KEYWORDS)
#define signals Q_SIGNALS
#define slots Q_SLOTS
#define emit Q_EMIT
#define foreach Q_FOREACH
#include <qcustomplot.h>
#undef signals
#undef slots
#undef emit
#undef foreach
#else
#include <qcustomplot.h>
#endif
