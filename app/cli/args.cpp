#include "args.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iostream>

namespace spark::cli {

Args::Args(const std::vector<std::string>& argv, const OptionTable& table)
{
    std::vector<std::string_view> noticed; // one deprecation notice per spelling, however often it is given
    bool onlyPositional = false;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        const auto& arg = argv[i];
        if (onlyPositional || arg.size() < 2 || arg.rfind("--", 0) != 0) {
            m_positional.push_back(arg);
            continue;
        }
        if (arg == "--") {
            onlyPositional = true;
            continue;
        }
        auto name = arg.substr(2);
        std::optional<std::string> inlineValue;
        if (const auto eq = name.find('='); eq != std::string::npos) {
            inlineValue = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        const auto option =
            std::find_if(table.begin(), table.end(), [&](const Option& o) { return o.name == name; });
        if (option == table.end()) {
            throw UsageError("unknown option --" + name);
        }
        if (option->value.empty()) {
            if (inlineValue) {
                throw UsageError("--" + name + " takes no value");
            }
        } else if (!inlineValue) {
            if (i + 1 >= argv.size()) {
                throw UsageError("--" + name + " needs a value");
            }
            inlineValue = argv[++i];
        }
        if (!option->replacedBy.empty()) {
            if (std::find(noticed.begin(), noticed.end(), option->name) == noticed.end()) {
                deprecationNotice("--" + name, option->replacedBy);
                noticed.push_back(option->name);
            }
            name = std::string(option->replacedBy);
        }
        if (inlineValue) {
            m_values[name].push_back(*inlineValue);
        } else {
            m_flags.push_back(name);
        }
    }
}

bool Args::flag(const std::string& name) const
{
    return std::find(m_flags.begin(), m_flags.end(), name) != m_flags.end();
}

std::optional<std::string> Args::value(const std::string& name) const
{
    const auto it = m_values.find(name);
    if (it == m_values.end()) {
        return std::nullopt;
    }
    return it->second.back();
}

std::string Args::value(const std::string& name, const std::string& fallback) const
{
    return value(name).value_or(fallback);
}

std::vector<std::string> Args::values(const std::string& name) const
{
    const auto it = m_values.find(name);
    return it == m_values.end() ? std::vector<std::string>{} : it->second;
}

long long Args::integer(const std::string& name, long long fallback, long long min, long long max) const
{
    const auto text = value(name);
    if (!text) {
        return fallback;
    }
    std::size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(*text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text->size()) {
        throw UsageError("--" + name + " expects an integer, got '" + *text + "'");
    }
    if (v < min || v > max) {
        throw UsageError("--" + name + " must be between " + std::to_string(min) + " and " +
                         std::to_string(max));
    }
    return v;
}

double Args::number(const std::string& name, double fallback) const
{
    const auto text = value(name);
    if (!text) {
        return fallback;
    }
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(*text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text->size() || !std::isfinite(v)) {
        throw UsageError("--" + name + " expects a number, got '" + *text + "'");
    }
    return v;
}

void Args::expectPositional(std::size_t min, std::size_t max) const
{
    if (max == 0) {
        max = min;
    }
    if (m_positional.size() < min || m_positional.size() > max) {
        throw UsageError(m_positional.size() < min ? "missing argument" : "too many arguments");
    }
}

void deprecationNotice(const std::string& old, std::string_view replacement)
{
    std::cerr << "sparkulator-cli: " << old << " is deprecated, use --" << replacement << "\n";
}

unsigned long long parseByteSize(const std::string& text)
{
    std::size_t i = 0;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
        ++i;
    }
    if (i == 0) {
        throw UsageError("size '" + text + "' must start with a number");
    }
    const double number = std::stod(text.substr(0, i));
    std::string unit = text.substr(i);
    std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::tolower(c); });
    double factor = 0;
    if (unit.empty() || unit == "b") {
        factor = 1;
    } else if (unit == "kb") {
        factor = 1e3;
    } else if (unit == "mb") {
        factor = 1e6;
    } else if (unit == "gb") {
        factor = 1e9;
    } else if (unit == "kib") {
        factor = 1024.0;
    } else if (unit == "mib") {
        factor = 1024.0 * 1024;
    } else if (unit == "gib") {
        factor = 1024.0 * 1024 * 1024;
    } else {
        throw UsageError("unknown size unit in '" + text + "' (use B, KB, MB, GB, KiB, MiB, GiB)");
    }
    return static_cast<unsigned long long>(number * factor);
}

} // namespace spark::cli
