#pragma once

#include "core/plan/planoptions.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace spark {

/// @brief A plan file that cannot be read: what() names the file and, where one is concerned, the field
/// ("plan.json: field 'targets': expected an array of strings").
class PlanFileError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

/// @brief The plan file format version planFileJson() writes and readPlanFile() accepts.
inline constexpr int kPlanFileVersion = 1;

/// @brief The plan file of @p options: a small JSON object a user can read and edit.
///
/// ```json
/// {
///   "format": "sparkulator-plan",   // fixed
///   "version": 1,                   // kPlanFileVersion
///   "preset": "auto",               // a preset name or "auto"
///   "targets": ["re:.*mlp.*"],      // entries added to the preset's targets, in order
///   "ignore": ["lm_head"],          // entries added to the preset's ignore entries, in order
///   "schemes": ["re:.*down.*=W8A16"], // scheme rules ENTRY=SCHEME after the preset's (the last match wins)
///   "rounding": "rtn",              // the default rounding method: rtn, mse or range
///   "roundings": ["re:.*down.*=mse"], // rounding rules ENTRY=METHOD (the last match wins)
///   "default_scheme": "W4A16",      // an integer symmetric scheme (bits and group, like --bits/--group)
///   "target_layers": 32,            // optional: the target model's layer count
///   "tp": 1,                        // optional: tensor-parallel degree (default 1)
///   "budget": {                     // optional: the budget whose allocation gave the scheme rules (a
///     "objective": "streamed_bytes",  //   record: the rules alone reproduce the plan); objective is
///     "budget_bytes": 1234567,        //   streamed_bytes, checkpoint_bytes or drafter_ms (then also
///     "weighted_error": 0.0123,       //   "budget_ms"); "alpha", "candidates" and the optional
///     "alpha": [], "candidates": [],  //   "rounding_candidates" as given
///     "rounding_candidates": ["mse", "range"],
///     "acceptance_kl": 0.004,         //   optional: the allocation minimised the KL measured on
///     "capture": "capture/"           //   this capture (weighted_error is then Σ rel_err², α = 1)
///   }
/// }
/// ```
/// Keys are written sorted (nlohmann::json's order). Every key but format and version may be left out
/// (its default above). Unknown keys are rejected on reading, so that a typo is not ignored.
nlohmann::json planFileJson(const PlanOptions& options);

/// @brief Parses plan file JSON text; @p fileName only names the file in errors. Throws PlanFileError
/// for bad JSON, a wrong type, an unknown key, an unknown version, an unknown default scheme or rounding.
PlanOptions parsePlanFile(std::string_view text, const std::string& fileName);

/// @brief Reads the plan file @p path (parsePlanFile). Throws PlanFileError, also when it cannot be read.
PlanOptions readPlanFile(const std::filesystem::path& path);

/// @brief Writes planFileJson(@p options) to @p path atomically: a temporary file beside it, fsynced, then
/// renamed over it (an existing file is replaced). Throws IoError naming the file.
void writePlanFile(const std::filesystem::path& path, const PlanOptions& options);

} // namespace spark
