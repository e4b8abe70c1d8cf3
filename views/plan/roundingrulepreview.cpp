#include "views/plan/roundingrulepreview.h"

#include "core/quant/roundingmethod.h"

namespace spark {

std::vector<EntryPreview> previewRoundingRules(const QuantPlan& plan, const QStringList& rules)
{
    std::vector<EntryPreview> previews;
    if (rules.isEmpty()) {
        return previews;
    }
    // The plan's modules are the described modules makePlan() matched its rules against.
    const std::vector<DraftModule> modules(plan.modules.begin(), plan.modules.end());
    for (const QString& rule : rules) {
        const std::string text = rule.toStdString();
        // The method follows the last '=' (a regex may hold one), exactly as makePlan() splits the rule.
        const auto equals = text.rfind('=');
        const RoundingMethod* method = equals == std::string::npos
                                           ? nullptr
                                           : findRoundingMethod(std::string_view(text).substr(equals + 1));
        EntryPreview preview;
        if (method && equals > 0) {
            preview =
                previewEntry(MatchEntry(text.substr(0, equals)), EntryKind::Scheme, "--rounding", modules);
            preview.scheme = std::string(method->name);
        } else {
            preview.kind = EntryKind::Scheme;
            preview.source = "--rounding";
            preview.valid = false;
            preview.error = "not ENTRY=METHOD with METHOD one of " + roundingMethodNames();
        }
        preview.entry = text;
        previews.push_back(std::move(preview));
    }
    return previews;
}

} // namespace spark
