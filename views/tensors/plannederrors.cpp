#include "views/tensors/plannederrors.h"

#include "core/plan/sensitivitysweep.h"
#include "core/quant/weightscheme.h"
#include "views/document/documentsnapshot.h"
#include "views/shared/formatting.h"

#include <QHash>
#include <algorithm>

namespace spark {

namespace {

// Every checkpoint module of the sweep's units, pointing at its unit.
QHash<QString, const SweepUnit*> unitsByModule(const SweepResult* sweep)
{
    QHash<QString, const SweepUnit*> units;
    if (!sweep || !sweep->measured) {
        return units;
    }
    for (const auto& unit : sweep->units) {
        for (const auto& module : unit.modules) {
            units.insert(QString::fromStdString(module), &unit);
        }
    }
    return units;
}

bool sameShownError(const TensorRowResult& a, const TensorRowResult& b)
{
    return a.relError == b.relError && a.maxError == b.maxError && a.sweptScheme == b.sweptScheme &&
           a.sweptUnit == b.sweptUnit && a.unmeasuredScheme == b.unmeasuredScheme;
}

} // namespace

bool measuredAs(const TensorRowResult& result, const WeightScheme* analysisScheme, const WeightScheme* scheme,
                const RoundingMethod* rounding)
{
    const auto* measured = result.measuredScheme ? result.measuredScheme : analysisScheme;
    const auto* method = result.measuredRounding ? result.measuredRounding : &rtnRounding();
    return result.relError && measured == scheme && method == (rounding ? rounding : &rtnRounding());
}

std::shared_ptr<const AnalysisTable> plannedErrors(const DocumentSnapshot* snapshot,
                                                   std::shared_ptr<const AnalysisTable> analysis,
                                                   const WeightScheme* analysisScheme,
                                                   const SweepResult* sweep)
{
    if (!snapshot || !analysis || !analysisScheme || snapshot->isQuantized()) {
        return analysis;
    }
    const auto units = unitsByModule(sweep);
    std::shared_ptr<AnalysisTable> shown;
    const std::size_t count = std::min(analysis->size(), snapshot->rows.size());
    for (std::size_t i = 0; i < count; ++i) {
        const TensorRow& row = snapshot->rows[i];
        const TensorRowResult& result = (*analysis)[i];
        // The plan decides per module and the analysis measures its weight: that is the row to correct.
        if (row.role != ModuleRole::Linear || result.decision.isEmpty() ||
            row.name != row.module + QStringLiteral(".weight")) {
            continue;
        }
        const WeightScheme* planned = findWeightScheme(result.decision.toStdString());
        // The analysis' figures stand for the plan's only when it measured the planned scheme and rounding.
        const RoundingMethod* rounding =
            result.rounding.isEmpty() ? &rtnRounding() : findRoundingMethod(result.rounding.toStdString());
        if (!rounding) {
            rounding = &rtnRounding();
        }
        if (!planned || !planned->quantizes() || measuredAs(result, analysisScheme, planned, rounding)) {
            continue;
        }
        if (!shown) {
            shown = std::make_shared<AnalysisTable>(*analysis);
        }
        TensorRowResult& corrected = (*shown)[i];
        corrected.relError.reset();
        corrected.maxError.reset();
        corrected.sqNorm.reset();
        corrected.sqErr.reset();
        const SweepUnit* unit = units.value(row.module, nullptr);
        const SweepCandidate* candidate = unit ? unit->candidate(planned, rounding) : nullptr;
        const QString shownScheme = schemeAndRoundingText(*planned, rounding);
        if (candidate) {
            corrected.relError = candidate->relErr;
            corrected.sweptScheme = shownScheme;
            corrected.sweptUnit = unit->modules.size() > 1;
        } else {
            corrected.unmeasuredScheme = shownScheme;
        }
    }
    return shown ? std::shared_ptr<const AnalysisTable>(std::move(shown)) : analysis;
}

QList<int> changedErrorRows(const AnalysisTable* before, const AnalysisTable* after)
{
    QList<int> rows;
    const std::size_t a = before ? before->size() : 0;
    const std::size_t b = after ? after->size() : 0;
    static const TensorRowResult empty;
    for (std::size_t i = 0; i < std::max(a, b); ++i) {
        if (!sameShownError(i < a ? (*before)[i] : empty, i < b ? (*after)[i] : empty)) {
            rows.append(static_cast<int>(i));
        }
    }
    return rows;
}

} // namespace spark
