#pragma once

#include <QtGlobal>

namespace spark {

/// @brief Hands out job ids so that the result of an outdated job (the user opened another file or
/// changed the scheme meanwhile) can be recognised and dropped when it arrives. GUI thread only.
class JobTracker
{
  public:
    /// @brief Starts a new job; every earlier job becomes stale.
    quint64 startJob() { return ++m_current; }
    /// @brief Makes every running job stale without starting one (e.g. on close or cancel).
    void invalidate() { ++m_current; }
    bool isCurrent(quint64 job) const { return job == m_current; }

  private:
    quint64 m_current = 0;
};

} // namespace spark
