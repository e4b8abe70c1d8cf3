#include "core/plan/planfile.h"

#include "core/io/filewriter.h"
#include "core/io/ioerror.h"
#include "core/io/strictjson.h"
#include "core/quant/roundingmethod.h"
#include "core/quant/weightscheme.h"

#include <atomic>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>
#include <unistd.h>

namespace spark {

namespace {

constexpr const char* kFormat = "sparkulator-plan";

[[noreturn]] void fail(const std::string& file, const std::string& message)
{
    throw PlanFileError(file + ": " + message);
}

[[noreturn]] void failField(const std::string& file, const char* field, const std::string& message)
{
    fail(file, std::string("field '") + field + "': " + message);
}

std::vector<std::string> stringList(const nlohmann::json& root, const char* field, const std::string& file)
{
    std::vector<std::string> out;
    if (!root.contains(field)) {
        return out;
    }
    const auto& value = root.at(field);
    if (!value.is_array()) {
        failField(file, field, "expected an array of strings");
    }
    for (std::size_t i = 0; i < value.size(); ++i) {
        if (!value[i].is_string()) {
            failField(file, field, "item " + std::to_string(i) + " is not a string");
        }
        out.push_back(value[i].get<std::string>());
    }
    return out;
}

int integerField(const nlohmann::json& value, const char* field, const std::string& file, int min, int max)
{
    if (!value.is_number_integer()) {
        failField(file, field, "expected an integer");
    }
    const auto n = value.get<long long>();
    if (n < min || n > max) {
        failField(file, field,
                  std::to_string(n) + " is out of range " + std::to_string(min) + ".." + std::to_string(max));
    }
    return static_cast<int>(n);
}

PlanBudget parseBudget(const nlohmann::json& value, const std::string& file)
{
    if (!value.is_object()) {
        failField(file, "budget", "expected an object");
    }
    static const std::set<std::string> known{
        "objective",  "budget_bytes",        "budget_ms",     "weighted_error",  "alpha",
        "candidates", "rounding_candidates", "acceptance_kl", "acceptance_loss", "acceptance_loss_kind",
        "capture"};
    for (const auto& [key, item] : value.items()) {
        if (!known.contains(key)) {
            failField(file, "budget", "unknown field '" + key + "'");
        }
    }
    PlanBudget budget;
    static const std::set<std::string> objectives{"streamed_bytes", "checkpoint_bytes", "drafter_ms"};
    if (!value.contains("objective") || !value.at("objective").is_string() ||
        !objectives.contains(value.at("objective").get<std::string>())) {
        failField(file, "budget", "'objective' must be streamed_bytes, checkpoint_bytes or drafter_ms");
    }
    budget.objective = value.at("objective").get<std::string>();
    if (!value.contains("budget_bytes") || !value.at("budget_bytes").is_number_unsigned()) {
        failField(file, "budget", "'budget_bytes' must be a non-negative integer");
    }
    budget.budgetBytes = value.at("budget_bytes").get<std::uint64_t>();
    if (value.contains("budget_ms")) {
        if (!value.at("budget_ms").is_number() || !(value.at("budget_ms").get<double>() > 0)) {
            failField(file, "budget", "'budget_ms' must be a positive number");
        }
        budget.budgetMs = value.at("budget_ms").get<double>();
    }
    if (budget.objective == "drafter_ms" && !budget.budgetMs) {
        failField(file, "budget", "objective drafter_ms needs 'budget_ms'");
    }
    if (value.contains("weighted_error")) {
        if (!value.at("weighted_error").is_number() || value.at("weighted_error").get<double>() < 0) {
            failField(file, "budget", "'weighted_error' must be a non-negative number");
        }
        budget.weightedError = value.at("weighted_error").get<double>();
    }
    if (value.contains("acceptance_kl")) { // written before the loss had a kind
        if (!value.at("acceptance_kl").is_number() || !(value.at("acceptance_kl").get<double>() >= 0)) {
            failField(file, "budget", "'acceptance_kl' must be a non-negative number");
        }
        budget.acceptanceLoss = value.at("acceptance_kl").get<double>();
        budget.acceptanceLossKind = "kl";
    }
    if (value.contains("acceptance_loss")) {
        const auto& loss = value.at("acceptance_loss");
        if (!loss.is_number() || !std::isfinite(loss.get<double>())) {
            failField(file, "budget", "'acceptance_loss' must be a finite number");
        }
        const auto kind = value.value("acceptance_loss_kind", nlohmann::json());
        if (kind != "expected-acceptance" && kind != "kl") {
            failField(file, "budget",
                      "'acceptance_loss' needs 'acceptance_loss_kind': \"expected-acceptance\" or \"kl\"");
        }
        budget.acceptanceLoss = loss.get<double>();
        budget.acceptanceLossKind = value.at("acceptance_loss_kind").get<std::string>();
    }
    if (value.contains("capture")) {
        if (!value.at("capture").is_string()) {
            failField(file, "budget", "'capture' must be a string");
        }
        budget.capture = value.at("capture").get<std::string>();
    }
    budget.alpha = stringList(value, "alpha", file);
    budget.candidates = stringList(value, "candidates", file);
    budget.roundingCandidates = stringList(value, "rounding_candidates", file);
    return budget;
}

/// The file's JSON object once its fields are known and its format and version are this Sparkulator's.
nlohmann::json parseEnvelope(std::string_view text, const std::string& file)
{
    nlohmann::json root;
    try {
        root = parseStrictJson(text);
    } catch (const nlohmann::json::parse_error& e) {
        fail(file, std::string("not valid JSON: ") + e.what());
    } catch (const DuplicateJsonKey& e) {
        fail(file, std::string("not valid JSON: ") + e.what());
    }
    if (!root.is_object()) {
        fail(file, "expected a JSON object (a Sparkulator plan file)");
    }
    static const std::set<std::string> known{"format",         "version",       "preset",   "targets",
                                             "ignore",         "schemes",       "rounding", "roundings",
                                             "default_scheme", "target_layers", "tp",       "budget"};
    for (const auto& [key, value] : root.items()) {
        if (!known.contains(key)) {
            fail(file, "unknown field '" + key + "'");
        }
    }
    if (!root.contains("format") || !root.at("format").is_string() ||
        root.at("format").get<std::string>() != kFormat) {
        failField(file, "format", std::string("expected \"") + kFormat + "\" (not a Sparkulator plan file)");
    }
    if (!root.contains("version")) {
        failField(file, "version", "missing");
    }
    if (!root.at("version").is_number_integer()) {
        failField(file, "version", "expected an integer");
    }
    if (const auto version = root.at("version").get<long long>(); version != kPlanFileVersion) {
        failField(file, "version",
                  "unknown version " + std::to_string(version) + " (this Sparkulator reads version " +
                      std::to_string(kPlanFileVersion) + ")");
    }
    return root;
}

/// The name of the rounding method @p value names.
std::string roundingField(const nlohmann::json& value, const std::string& file)
{
    const auto* method = value.is_string() ? findRoundingMethod(value.get<std::string>()) : nullptr;
    if (!method) {
        failField(
            file, "rounding",
            (value.is_string() ? "'" + value.get<std::string>() + "' is not" : std::string("expected")) +
                " a rounding method (" + roundingMethodNames() + ")");
    }
    return std::string(method->name);
}

/// The integer symmetric scheme @p value names.
const WeightScheme& defaultSchemeField(const nlohmann::json& value, const std::string& file)
{
    if (!value.is_string()) {
        failField(file, "default_scheme", "expected a string");
    }
    const WeightScheme* scheme = findWeightScheme(value.get<std::string>());
    if (!scheme || scheme->family != SchemeFamily::IntSymmetric) {
        failField(file, "default_scheme",
                  "'" + value.get<std::string>() +
                      "' is not an integer symmetric scheme (W4A16, W4A16:g32, W8A16, ...)");
    }
    return *scheme;
}

} // namespace

nlohmann::json planFileJson(const PlanOptions& options)
{
    nlohmann::json out = nlohmann::json::object();
    out["format"] = kFormat;
    out["version"] = kPlanFileVersion;
    out["preset"] = options.preset;
    out["targets"] = options.targets;
    out["ignore"] = options.ignore;
    out["schemes"] = options.schemes;
    out["rounding"] = options.rounding;
    out["roundings"] = options.roundings;
    const WeightScheme* scheme = intSymmetricScheme(options.bits, options.groupSize);
    out["default_scheme"] = scheme ? std::string(scheme->name) : std::string("W4A16");
    if (options.targetLayers) {
        out["target_layers"] = *options.targetLayers;
    }
    out["tp"] = options.tpDegree;
    if (const auto& b = options.budget) {
        auto& budget = out["budget"];
        budget["objective"] = b->objective;
        budget["budget_bytes"] = b->budgetBytes;
        if (b->budgetMs) {
            budget["budget_ms"] = *b->budgetMs;
        }
        budget["weighted_error"] = b->weightedError;
        if (b->acceptanceLoss) {
            budget["acceptance_loss"] = *b->acceptanceLoss;
            budget["acceptance_loss_kind"] = b->acceptanceLossKind;
            budget["capture"] = b->capture;
        }
        budget["alpha"] = b->alpha;
        budget["candidates"] = b->candidates;
        if (!b->roundingCandidates.empty()) {
            budget["rounding_candidates"] = b->roundingCandidates;
        }
    }
    return out;
}

PlanOptions parsePlanFile(std::string_view text, const std::string& file)
{
    const auto root = parseEnvelope(text, file);
    PlanOptions options;
    if (root.contains("preset")) {
        if (!root.at("preset").is_string()) {
            failField(file, "preset", "expected a string");
        }
        options.preset = root.at("preset").get<std::string>();
    }
    options.targets = stringList(root, "targets", file);
    options.ignore = stringList(root, "ignore", file);
    options.schemes = stringList(root, "schemes", file);
    if (root.contains("rounding")) {
        options.rounding = roundingField(root.at("rounding"), file);
    }
    // Rules are checked by the planner like scheme rules (a bad one is a plan error naming it).
    options.roundings = stringList(root, "roundings", file);
    if (root.contains("default_scheme")) {
        const auto& scheme = defaultSchemeField(root.at("default_scheme"), file);
        options.bits = scheme.bits;
        options.groupSize = scheme.groupSize;
    }
    if (root.contains("target_layers") && !root.at("target_layers").is_null()) {
        options.targetLayers = integerField(root.at("target_layers"), "target_layers", file, 0, 100000);
    }
    if (root.contains("tp")) {
        options.tpDegree = integerField(root.at("tp"), "tp", file, 1, 64);
    }
    if (root.contains("budget") && !root.at("budget").is_null()) {
        options.budget = parseBudget(root.at("budget"), file);
    }
    return options;
}

PlanOptions readPlanFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::error_code ec;
        fail(path.string(), std::filesystem::exists(path, ec) ? "cannot read the file" : "no such file");
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) {
        fail(path.string(), "cannot read the file");
    }
    return parsePlanFile(text.str(), path.string());
}

void writePlanFile(const std::filesystem::path& path, const PlanOptions& options)
{
    static std::atomic<unsigned> counter{0};
    auto temp = path;
    temp += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    try {
        writeTextFile(temp, planFileJson(options).dump(2) + "\n");
    } catch (...) {
        std::error_code ec;
        std::filesystem::remove(temp, ec);
        throw;
    }
    std::error_code ec;
    std::filesystem::rename(temp, path, ec);
    if (ec) {
        std::filesystem::remove(temp, ec);
        throw IoError(IoErrorKind::WriteFailed, path.string(), "cannot replace the file: " + ec.message());
    }
}

} // namespace spark
