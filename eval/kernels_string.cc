// String kernels: StringNormalizer, StringConcat, StringSplit,
// RegexFullMatch (RE2 syntax, matched in linear time by eval/regex.h) and
// TfIdfVectorizer (of strings or integers).
// Case changes and case-insensitive comparisons are ASCII-only; strings
// with other bytes are refused where those apply, not guessed at.

#include <algorithm>
#include <cstring>
#include <map>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "eval/broadcast.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/kernel_util.h"
#include "eval/regex.h"

namespace onnxconvert::eval::string_ops {

absl::Status ExpectStrings(const KernelCall& call, const Tensor* t, const char* name) {
  if (t == nullptr) return call.Error(absl::StrCat(name, " is absent"));
  if (t->elem_type() != onnx::TensorProto::STRING) {
    return call.Error(absl::StrCat(name, " is not a string tensor"));
  }
  return absl::OkStatus();
}

bool IsAscii(absl::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// StringNormalizer: drops the elements equal to a stopword (ignoring ASCII
// case unless is_case_sensitive), then changes case; an input of [C] or
// [1, C] whose elements all go becomes [""] or [[""]].
Outputs StringNormalizerKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  OC_RETURN_IF_ERROR(ExpectStrings(call, x, "X"));
  bool matrix = x->rank() == 2;
  if (!(x->rank() == 1 || (matrix && x->dims()[0] == 1))) {
    return call.Error("X is neither [C] nor [1, C]");
  }
  const onnx::AttributeProto* action_attr = call.attribute("case_change_action");
  std::string action = action_attr == nullptr ? "NONE" : action_attr->s();
  if (action != "NONE" && action != "LOWER" && action != "UPPER") {
    return call.Error(absl::StrCat("case_change_action \"", action, "\" is unknown"));
  }
  bool sensitive = call.Int("is_case_sensitive", 0) != 0;
  absl::flat_hash_set<std::string> stopwords;
  if (const onnx::AttributeProto* a = call.attribute("stopwords")) {
    for (const std::string& word : a->strings()) {
      if (!sensitive && !IsAscii(word)) return call.Error("a stopword is not ASCII");
      stopwords.insert(sensitive ? word : absl::AsciiStrToLower(word));
    }
  }
  std::vector<std::string> kept;
  for (const std::string& s : x->strings()) {
    if ((action != "NONE" || (!sensitive && !stopwords.empty())) && !IsAscii(s)) {
      return call.Error("case mapping of strings other than ASCII is not supported");
    }
    if (stopwords.contains(sensitive ? s : absl::AsciiStrToLower(s))) continue;
    kept.push_back(action == "LOWER"   ? absl::AsciiStrToLower(s)
                   : action == "UPPER" ? absl::AsciiStrToUpper(s)
                                       : s);
  }
  if (kept.empty()) kept.push_back("");
  int64_t n = static_cast<int64_t>(kept.size());
  Tensor out(onnx::TensorProto::STRING, matrix ? std::vector<int64_t>{1, n} : std::vector<int64_t>{n});
  out.strings() = std::move(kept);
  return One(std::move(out));
}

// StringConcat: the broadcast elements of X and Y joined.
Outputs StringConcatKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  const Tensor* y = call.input(1);
  OC_RETURN_IF_ERROR(ExpectStrings(call, x, "X"));
  OC_RETURN_IF_ERROR(ExpectStrings(call, y, "Y"));
  absl::StatusOr<std::vector<int64_t>> dims = BroadcastDims({x->dims(), y->dims()});
  if (!dims.ok()) return call.Error(dims.status().message());
  Tensor out(onnx::TensorProto::STRING, *dims);
  BroadcastCursor cx(*dims, x->dims()), cy(*dims, y->dims());
  for (int64_t i = 0; i < out.size(); ++i, cx.Next(), cy.Next()) {
    out.strings()[i] = absl::StrCat(x->strings()[cx.offset()], y->strings()[cy.offset()]);
  }
  return One(std::move(out));
}

// The length of the whitespace character (as Python's str.isspace, UTF-8)
// at s[i], or 0.
size_t SpaceAt(absl::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f)) return 1;
  // The other Unicode whitespace: U+0085, U+00A0, U+1680, U+2000-U+200A,
  // U+2028, U+2029, U+202F, U+205F, U+3000.
  static constexpr const char* kWide[] = {
      "\xc2\x85", "\xc2\xa0", "\xe1\x9a\x80", "\xe2\x80\x80", "\xe2\x80\x81", "\xe2\x80\x82",
      "\xe2\x80\x83", "\xe2\x80\x84", "\xe2\x80\x85", "\xe2\x80\x86", "\xe2\x80\x87",
      "\xe2\x80\x88", "\xe2\x80\x89", "\xe2\x80\x8a", "\xe2\x80\xa8", "\xe2\x80\xa9",
      "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80"};
  for (const char* wide : kWide) {
    size_t n = std::strlen(wide);
    if (s.substr(i, n) == wide) return n;
  }
  return 0;
}

// Python's s.split(None, maxsplit): runs of whitespace separate, leading
// whitespace is skipped, and the rest after maxsplit splits is one piece
// (its trailing whitespace kept).
std::vector<std::string> SplitOnSpace(absl::string_view s, int64_t maxsplit) {
  std::vector<std::string> parts;
  size_t i = 0;
  auto skip = [&] {
    while (i < s.size()) {
      size_t n = SpaceAt(s, i);
      if (n == 0) break;
      i += n;
    }
  };
  skip();
  while (i < s.size()) {
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
      parts.emplace_back(s.substr(i));
      break;
    }
    size_t start = i;
    while (i < s.size() && SpaceAt(s, i) == 0) ++i;
    parts.emplace_back(s.substr(start, i - start));
    skip();
  }
  return parts;
}

// Python's s.split(delimiter, maxsplit).
std::vector<std::string> SplitOn(absl::string_view s, absl::string_view delimiter,
                                 int64_t maxsplit) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
    size_t at = s.find(delimiter, start);
    if (at == absl::string_view::npos) break;
    parts.emplace_back(s.substr(start, at - start));
    start = at + delimiter.size();
  }
  parts.emplace_back(s.substr(start));
  return parts;
}

// StringSplit: each element split (on runs of whitespace when the
// delimiter is empty or unset), the pieces padded with "" to the most any
// element has; and each element's count of pieces.
Outputs StringSplitKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  OC_RETURN_IF_ERROR(ExpectStrings(call, x, "X"));
  const onnx::AttributeProto* delimiter_attr = call.attribute("delimiter");
  std::string delimiter = delimiter_attr == nullptr ? "" : delimiter_attr->s();
  int64_t maxsplit = call.Int("maxsplit", -1);
  std::vector<std::vector<std::string>> pieces;
  size_t widest = 0;
  for (const std::string& s : x->strings()) {
    pieces.push_back(delimiter.empty() ? SplitOnSpace(s, maxsplit)
                                       : SplitOn(s, delimiter, maxsplit));
    widest = std::max(widest, pieces.back().size());
  }
  std::vector<int64_t> dims = x->dims();
  dims.push_back(static_cast<int64_t>(widest));
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, dims));
  (void)count;
  Tensor y(onnx::TensorProto::STRING, dims);
  Tensor z(onnx::TensorProto::INT64, x->dims());
  for (size_t i = 0; i < pieces.size(); ++i) {
    z.data<int64_t>()[i] = static_cast<int64_t>(pieces[i].size());
    for (size_t k = 0; k < pieces[i].size(); ++k) {
      y.strings()[i * widest + k] = std::move(pieces[i][k]);
    }
  }
  std::vector<Tensor> outputs;
  outputs.push_back(std::move(y));
  outputs.push_back(std::move(z));
  return outputs;
}

// RegexFullMatch: whether each element matches the pattern as a whole.
Outputs RegexFullMatchKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  OC_RETURN_IF_ERROR(ExpectStrings(call, x, "X"));
  const onnx::AttributeProto* pattern = call.attribute("pattern");
  if (pattern == nullptr) return call.Error("pattern is unset");
  absl::StatusOr<Regex> regex = Regex::Compile(pattern->s());
  if (!regex.ok()) return call.Error(regex.status().message());
  Tensor out(onnx::TensorProto::BOOL, x->dims());
  for (int64_t i = 0; i < x->size(); ++i) {
    out.data<bool>()[i] = regex->FullMatch(x->strings()[i]);
  }
  return One(std::move(out));
}

// The n-grams of TfIdfVectorizer's pool as a trie: a node per prefix, the
// n-gram's id (from 1; 0 for a prefix that is no n-gram) at its last item.
struct GramTrie {
  struct Node {
    int64_t id = 0;
    std::map<std::string, int> next;
  };
  std::vector<Node> nodes = {Node{}};  // nodes[0] is the root
};

// The trie of the pool (`items`, as strings) whose n-grams of size n
// start at ngram_counts[n - 1]; sizes outside [min_n, max_n] only take
// their ids.
GramTrie BuildTrie(const std::vector<std::string>& items, const std::vector<int64_t>& counts,
                   int64_t min_n, int64_t max_n) {
  GramTrie trie;
  int64_t id = 1;
  for (size_t i = 0; i < counts.size(); ++i) {
    int64_t size = static_cast<int64_t>(i) + 1;
    int64_t begin = counts[i];
    int64_t end = i + 1 < counts.size() ? counts[i + 1] : static_cast<int64_t>(items.size());
    int64_t grams = end > begin ? (end - begin) / size : 0;
    if (size < min_n || size > max_n) {
      id += grams;
      continue;
    }
    for (int64_t g = 0; g < grams; ++g) {
      int node = 0;
      for (int64_t k = 0; k < size; ++k) {
        const std::string& item = items[begin + g * size + k];
        auto [it, added] = trie.nodes[node].next.emplace(item, static_cast<int>(trie.nodes.size()));
        if (added) trie.nodes.emplace_back();
        node = it->second;
      }
      trie.nodes[node].id = id++;
    }
  }
  return trie;
}

// TfIdfVectorizer: per row of X ([C] or [B, C]), the count of each pool
// n-gram (sizes min_gram_length..max_gram_length, items up to
// max_skip_count apart; unigrams counted once) in its ngram_indexes
// column, weighted by mode: TF (counts), IDF (the weight, or 1, where
// counted), TFIDF (weight times count, or the count).
Outputs TfIdfVectorizerKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  if (x == nullptr) return call.Error("X is absent");
  int64_t min_n = call.Int("min_gram_length", 0);
  int64_t max_n = call.Int("max_gram_length", 0);
  int64_t max_skip = call.Int("max_skip_count", 0);
  std::vector<int64_t> counts = call.Ints("ngram_counts").value_or(std::vector<int64_t>());
  std::vector<int64_t> indexes = call.Ints("ngram_indexes").value_or(std::vector<int64_t>());
  const onnx::AttributeProto* mode_attr = call.attribute("mode");
  std::string mode = mode_attr == nullptr ? "" : mode_attr->s();
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") {
    return call.Error(absl::StrCat("mode \"", mode, "\" is unknown"));
  }
  if (min_n < 1 || max_n < min_n || max_skip < 0 || max_skip > kMaxElements || indexes.empty()) {
    return call.Error("the gram lengths, skip count or ngram_indexes are invalid");
  }
  // The pool and X's items as strings (integers in decimal).
  std::vector<std::string> pool;
  if (const onnx::AttributeProto* a = call.attribute("pool_strings"); a != nullptr && a->strings_size() > 0) {
    if (x->elem_type() != onnx::TensorProto::STRING) return call.Error("X is not strings");
    pool.assign(a->strings().begin(), a->strings().end());
  } else if (const onnx::AttributeProto* b = call.attribute("pool_int64s")) {
    if (x->elem_type() == onnx::TensorProto::STRING) return call.Error("X is not integers");
    for (int64_t v : b->ints()) pool.push_back(absl::StrCat(v));
  }
  std::vector<std::string> items;
  if (x->elem_type() == onnx::TensorProto::STRING) {
    items = x->strings();
  } else {
    OC_ASSIGN_OR_RETURN(std::vector<int64_t> values, Int64s(call, *x));
    for (int64_t v : values) items.push_back(absl::StrCat(v));
  }
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 0 || counts[i] > static_cast<int64_t>(pool.size()) ||
        (i > 0 && counts[i] < counts[i - 1])) {
      return call.Error("ngram_counts do not fit the pool");
    }
  }
  if (x->rank() > 2 || (x->rank() == 2 && x->dims()[0] < 1)) {
    return call.Error("X is neither [C] nor [B, C] with B > 0");
  }
  bool batched = x->rank() == 2;
  int64_t rows = batched ? x->dims()[0] : 1;
  int64_t row_size = rows == 0 ? 0 : x->size() / rows;
  int64_t width = *std::max_element(indexes.begin(), indexes.end()) + 1;
  std::vector<float> weights;
  if (const onnx::AttributeProto* w = call.attribute("weights")) {
    weights.assign(w->floats().begin(), w->floats().end());
  }
  if (!weights.empty() && static_cast<int64_t>(weights.size()) < width) {
    return call.Error("weights do not cover the output");
  }
  GramTrie trie = BuildTrie(pool, counts, min_n, max_n);
  std::vector<int64_t> frequency(rows * width, 0);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t begin = row * row_size, end = begin + row_size;
    int64_t start_n = min_n;
    for (int64_t skip = 1; skip <= max_skip + 1; ++skip) {
      for (int64_t start = begin; start < end; ++start) {
        // Too close to the end for any n-gram of start_n items.
        if (start_n > 1 && (end - 1 - start) / skip < start_n - 1) break;
        int node = 0;
        for (int64_t n = 1, at = start; !trie.nodes[node].next.empty() && n <= max_n && at < end;
             ++n, at += skip) {
          auto it = trie.nodes[node].next.find(items[at]);
          if (it == trie.nodes[node].next.end()) break;
          node = it->second;
          int64_t id = trie.nodes[node].id;
          if (n >= start_n && id != 0) {
            if (id > static_cast<int64_t>(indexes.size()) || indexes[id - 1] < 0) {
              return call.Error("ngram_indexes do not cover the pool's n-grams");
            }
            ++frequency[row * width + indexes[id - 1]];
          }
        }
      }
      if (start_n == 1) {
        // Unigrams are counted once, whatever the skip.
        if (++start_n > max_n) break;
      }
    }
  }
  Tensor y(onnx::TensorProto::FLOAT, batched ? std::vector<int64_t>{rows, width}
                                              : std::vector<int64_t>{width});
  absl::Span<float> out = y.data<float>();
  for (int64_t i = 0; i < rows * width; ++i) {
    double f = static_cast<double>(frequency[i]);
    double w = weights.empty() ? 1.0 : weights[i % width];
    out[i] = static_cast<float>(mode == "TF" ? f : mode == "IDF" ? (f > 0 ? w : 0.0) : w * f);
  }
  return One(std::move(y));
}

}  // namespace onnxconvert::eval::string_ops
