#include "views/plan/planspeedprediction.h"

#include "core/bench/speedmodel.h"
#include "core/bench/speedmodelplan.h"
#include "views/shared/localizednumber.h"

#include <QCoreApplication>
#include <QLocale>
#include <QStringList>

namespace spark {
namespace {

QString tr(const char* text)
{
    return QCoreApplication::translate("PlanSpeedPrediction", text);
}

} // namespace

PlanSpeedPrediction predictPlanSpeed(const QuantPlan& plan, const BenchReport& report, double drafterStepMs)
{
    PlanSpeedPrediction out;
    const BenchCell* first = nullptr;
    for (const auto& c : report.cells) {
        if (c.arm == report.baselineArm && c.acceptance.k() > 0) {
            first = &c;
            break;
        }
    }
    if (!first || !(drafterStepMs > 0)) {
        return out;
    }
    SpeedModelOptions options;
    applyPlan(options, plan, false);
    options.drafterMs = drafterStepMs * draftStepsPerCycle(options.kind, first->acceptance.k());
    SpeedModel model;
    try {
        model = computeSpeedModel(report, options);
    } catch (const SpeedModelError& e) {
        out.text = tr("Speed model: %1").arg(QString::fromStdString(e.what()));
        out.error = true;
        return out;
    }
    QStringList lines;
    for (const auto& c : model.cells) {
        if (!c.quantized) {
            continue;
        }
        const auto& q = *c.quantized;
        QString line = tr("Predicted decode at prompt length %1: %2 → %3 tok/s (%4), best k %5 → %6")
                           .arg(c.promptLen > 0 ? QLocale().toString(c.promptLen) : tr("unknown"),
                                localizedSignificant(c.measuredTokS), localizedSignificant(q.predictedTokS),
                                localizedChangePercent(q.predictedChange))
                           .arg(c.bestK)
                           .arg(q.bestK);
        if (q.measured) {
            line += tr("; measured '%1': %2 tok/s (%3)")
                        .arg(QString::fromStdString(q.measured->arm),
                             localizedSignificant(q.measured->measuredTokS),
                             localizedChangePercent(q.measured->measuredChange));
        }
        lines << line;
    }
    out.text = lines.join(QLatin1Char('\n'));
    QStringList assumptions;
    assumptions
        << tr("From the benchmarks of '%1' with a drafter time of %2 ms per cycle (%3 × %4 ms per step).")
               .arg(QString::fromStdString(report.baselineArm), localizedSignificant(options.drafterMs))
               .arg(draftStepsPerCycle(options.kind, first->acceptance.k()))
               .arg(localizedSignificant(drafterStepMs));
    for (const auto& a : model.assumptions) {
        assumptions << QString::fromStdString(a);
    }
    out.assumption = assumptions.join(QLatin1Char(' '));
    return out;
}

} // namespace spark
