#include "adapters/rewrites.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "base/op_key.h"

namespace onnxconvert::adapters {
namespace {

std::string Key(absl::string_view domain, absl::string_view op, int from, int to) {
  return absl::StrCat(OpKey(domain, op), kKeySeparator, from, kKeySeparator, to);
}

}  // namespace

void RewriteTable::Register(absl::string_view domain, absl::string_view op, int from, int to,
                            AdapterFn fn, absl::string_view what, std::any row) {
  std::string name = absl::StrCat(domain.empty() ? "" : absl::StrCat(domain, "."), op, " ", from,
                                  "->", to, ": ", what);
  auto [it, inserted] = entries_.try_emplace(Key(domain, op, from, to),
                                             AdapterEntry{AdapterEntry::kRewrite, fn, "", name, std::move(row)});
  if (!inserted) {
    std::fprintf(stderr, "onnx-convert: adapter registered twice: %s\n", name.c_str());
    std::abort();
  }
}

const AdapterEntry* RewriteTable::Find(absl::string_view domain, absl::string_view op, int from,
                                       int to) const {
  auto it = entries_.find(Key(domain, op, from, to));
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace onnxconvert::adapters
