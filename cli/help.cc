#include "cli/help.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnxconvert::cli {
namespace {

// Every option of every command, one line each.
const std::map<absl::string_view, absl::string_view>& FlagHelpTable() {
  static const auto* table = new std::map<absl::string_view, absl::string_view>{
      {"allow-casts", "accepted for compatibility; casts are on unless --no-casts"},
      {"compare", "compare the outputs with the output_*.pb files of DIR's data sets"},
      {"dim", "the value of a symbolic dim for random inputs (NAME=V,...)"},
      {"dry-run", "plan and report the conversion, writing nothing"},
      {"explain", "say why each named rule matches or not at each node of its root op"},
      {"external-data-threshold",
       "write tensors of at least BYTES to a data file beside the model"},
      {"force", "convert again the inputs a previous run finished"},
      {"full-validation", "validate the whole model after every step, not only touched nodes"},
      {"inputs", "evaluate on the input_*.pb files of DIR's data sets"},
      {"ir-version", "the IR version of the output model"},
      {"jobs", "models converted at once (default: the number of cores)"},
      {"json", "print JSON instead of text"},
      {"list", "list the passes and what each does"},
      {"max-fold-bytes", "skip a fold whose outputs pass B bytes and grow the model"},
      {"ml-to", "the target opset of ai.onnx.ml"},
      {"no-casts", "refuse a node whose types the target lacks instead of casting around it"},
      {"no-expand", "refuse an op gone at the target instead of expanding its function body"},
      {"optimize", "then rewrite the result with the graph rewriter (exact or deploy)"},
      {"output", "where to write the result"},
      {"passes", "run only these passes, in this order (comma-separated)"},
      {"profile", "exact (nothing computes differently; default) or deploy (fusions)"},
      {"progress", "how batch shows progress: auto, bar or lines"},
      {"random", "evaluate on N seeded random input sets"},
      {"report", "write the report to FILE (.json, .html or .txt)"},
      {"report-format", "format of each model's report file: json or txt"},
      {"rules", "rule files of your own, applied after the profile's passes"},
      {"seed", "the seed of the random input sets"},
      {"shard", "convert only share I of N of the inputs (I/N; by a hash of each name)"},
      {"skip", "leave out these passes (comma-separated)"},
      {"strict", "fail on anything inference cannot type"},
      {"to", "the target opset of ai.onnx"},
      {"verify", "evaluate the original and the result on N random input sets (default 3)"},
      {"verify-inputs", "verify on the test_data_set_* folders of DIR instead"},
  };
  return *table;
}

// The option words of `flags`, dashes included.
std::vector<std::string> OptionWords(absl::Span<const FlagSpec> flags) {
  std::vector<std::string> words = {"--help"};
  for (const FlagSpec& flag : flags) {
    words.push_back(absl::StrCat("--", flag.name));
    if (!flag.short_name.empty()) words.push_back(absl::StrCat("-", flag.short_name));
  }
  return words;
}

std::string BashScript(absl::Span<const CompletionEntry> commands) {
  std::vector<std::string> names;
  std::string cases;
  for (const CompletionEntry& command : commands) {
    names.push_back(command.name);
    absl::StrAppend(&cases, "    ", command.name, ") options=\"",
                    absl::StrJoin(OptionWords(command.flags), " "), "\" ;;\n");
  }
  return absl::StrCat(
      "# bash completion for onnx-convert: source it, or put it in\n"
      "# /etc/bash_completion.d/onnx-convert\n"
      "_onnx_convert() {\n"
      "  local current=\"${COMP_WORDS[COMP_CWORD]}\" command=\"\" options=\"\" i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case \"${COMP_WORDS[i]}\" in -*) ;; *) command=\"${COMP_WORDS[i]}\"; break ;; esac\n"
      "  done\n"
      "  if [[ -z \"$command\" ]]; then\n"
      "    COMPREPLY=($(compgen -W \"",
      absl::StrJoin(names, " "),
      " --help --version --server\" -- \"$current\"))\n"
      "    return\n"
      "  fi\n"
      "  case \"$command\" in\n",
      cases,
      "  esac\n"
      "  if [[ \"$current\" == -* ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$options\" -- \"$current\"))\n"
      "  else\n"
      "    COMPREPLY=($(compgen -f -- \"$current\"))\n"
      "  fi\n"
      "}\n"
      "complete -o filenames -F _onnx_convert onnx-convert\n");
}

// `text` with the characters zsh's _describe treats specially escaped.
std::string ZshEscaped(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\'') continue;
    if (c == ':' || c == '[' || c == ']') out += '\\';
    out += c;
  }
  return out;
}

std::string ZshScript(absl::Span<const CompletionEntry> commands) {
  std::string names;
  std::string cases;
  for (const CompletionEntry& command : commands) {
    absl::StrAppend(&names, "    '", command.name, "'\n");
    std::string options = "'--help[the usage of this command]'";
    for (const FlagSpec& flag : command.flags) {
      absl::StrAppend(&options, " '--", flag.name, flag.takes_value && !flag.optional_value ? "=" : "",
                      "[", ZshEscaped(FlagHelp(flag.name)), "]", flag.takes_value ? ":value:_files" : "",
                      "'");
      if (!flag.short_name.empty()) {
        absl::StrAppend(&options, " '-", flag.short_name, "[", ZshEscaped(FlagHelp(flag.name)),
                        "]", flag.takes_value ? ":value:_files" : "", "'");
      }
    }
    absl::StrAppend(&cases, "    ", command.name, ") _arguments ", options, " '*:file:_files' ;;\n");
  }
  return absl::StrCat(
      "#compdef onnx-convert\n"
      "# zsh completion for onnx-convert: put it on $fpath as _onnx-convert\n"
      "_onnx_convert() {\n"
      "  local -a commands\n"
      "  commands=(\n",
      names,
      "  )\n"
      "  if (( CURRENT == 2 )); then\n"
      "    compadd -a commands\n"
      "    return\n"
      "  fi\n"
      "  case \"${words[2]}\" in\n",
      cases,
      "  esac\n"
      "}\n"
      "compdef _onnx_convert onnx-convert\n");
}

}  // namespace

absl::string_view FlagHelp(absl::string_view name) {
  auto found = FlagHelpTable().find(name);
  return found == FlagHelpTable().end() ? absl::string_view() : found->second;
}

std::string CompletionScript(absl::string_view shell, absl::Span<const CompletionEntry> commands) {
  if (shell == "bash") return BashScript(commands);
  if (shell == "zsh") return ZshScript(commands);
  return "";
}

}  // namespace onnxconvert::cli
