#include "cli/args.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace onnxconvert::cli {
namespace {

const FlagSpec* FindSpec(absl::Span<const FlagSpec> specs, absl::string_view name,
                         bool is_short) {
  for (const FlagSpec& spec : specs) {
    if ((is_short ? spec.short_name : spec.name) == name && !name.empty()) {
      return &spec;
    }
  }
  return nullptr;
}

}  // namespace

std::optional<std::string> ParsedArgs::Get(absl::string_view name) const {
  auto it = flags.find(name);
  if (it == flags.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<ParsedArgs> ParseArgs(absl::Span<const std::string> args,
                                     absl::Span<const FlagSpec> specs) {
  ParsedArgs parsed;
  bool flags_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (flags_ended || arg.size() < 2 || arg[0] != '-') {
      parsed.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_ended = true;
      continue;
    }
    bool is_long = absl::StartsWith(arg, "--");
    absl::string_view body = absl::string_view(arg).substr(is_long ? 2 : 1);
    std::optional<std::string> inline_value;
    if (size_t eq = body.find('='); is_long && eq != absl::string_view::npos) {
      inline_value = std::string(body.substr(eq + 1));
      body = body.substr(0, eq);
    }
    const FlagSpec* spec = FindSpec(specs, body, !is_long);
    if (spec == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown option '", arg, "'"));
    }
    std::string name(spec->name);
    if (parsed.flags.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat("option --", name, " given twice"));
    }
    if (!spec->takes_value) {
      if (inline_value) {
        return absl::InvalidArgumentError(
            absl::StrCat("option --", name, " takes no value"));
      }
      parsed.flags[name] = "";
      continue;
    }
    if (!inline_value && spec->optional_value) inline_value = "";
    if (!inline_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("option ", arg, " needs a value"));
      }
      inline_value = args[++i];
    }
    parsed.flags[name] = *inline_value;
  }
  return parsed;
}

absl::StatusOr<int64_t> IntFlag(const ParsedArgs& args, absl::string_view name) {
  std::optional<std::string> value = args.Get(name);
  int64_t parsed = 0;
  if (!value || !absl::SimpleAtoi(*value, &parsed) || parsed < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a number"));
  }
  return parsed;
}

}  // namespace onnxconvert::cli
