#include "views/acceptance/acceptancerunner.h"

namespace spark {

AcceptanceRunner::AcceptanceRunner(QObject* parent)
    : QObject(parent), m_job(
                           this, [this](double fraction) { Q_EMIT progressChanged(fraction); },
                           [this](const AcceptanceJobResult& result) { Q_EMIT finished(result); })
{
}

void AcceptanceRunner::start(const AcceptanceJob& job, Kind kind)
{
    m_kind = kind;
    // Every input problem becomes the panel's error text.
    m_job.start([job, kind](const ProgressFn& progress) {
        AcceptanceJob reporting = job;
        reporting.options.progress = progress;
        AcceptanceJobResult result;
        if (kind == Kind::Acceptance) {
            result.run = std::make_shared<const AcceptanceRun>(runAcceptance(reporting));
        } else {
            result.units = std::make_shared<const std::vector<UnitSensitivity>>(runSensitivity(reporting));
        }
        return result;
    });
}

void AcceptanceRunner::cancel()
{
    m_job.cancel();
}

} // namespace spark
