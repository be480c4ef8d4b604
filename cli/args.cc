#include "cli/args.h"

#include <algorithm>
#include <string>
#include <vector>

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

namespace {

// Levenshtein distance between `a` and `b`.
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string ClosestWord(absl::string_view given, absl::Span<const std::string> known) {
  std::string best;
  size_t best_distance = ~size_t{0};
  for (const std::string& word : known) {
    const size_t distance = EditDistance(given, word);
    if (distance < best_distance) {
      best = word;
      best_distance = distance;
    }
  }
  const size_t allowed = std::min<size_t>(3, std::max<size_t>(1, best.size() / 3));
  return best_distance <= allowed ? best : "";
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
      std::vector<std::string> known = {"--help"};
      for (const FlagSpec& flag : specs) known.push_back(absl::StrCat("--", flag.name));
      const std::string closest = ClosestWord(absl::StrCat("--", body), known);
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option '", arg, "'",
                       closest.empty() ? "" : absl::StrCat(" (did you mean '", closest, "'?)")));
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
