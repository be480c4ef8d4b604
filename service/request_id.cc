#include "service/request_id.h"

#include <algorithm>
#include <cstdint>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

namespace onnxconvert::service {
namespace {

bool IsPlainIdChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

}  // namespace

std::string ClientRequestId(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) {
  auto it = metadata.find(kRequestIdMetadata);
  if (it == metadata.end()) return "";
  std::string id(it->second.data(), it->second.size());
  bool plain = !id.empty() && id.size() <= kMaxRequestIdLength &&
               std::all_of(id.begin(), id.end(), IsPlainIdChar);
  return plain ? id : "";
}

std::string NewRequestId() {
  static absl::Mutex mu(absl::kConstInit);
  static absl::BitGen* bits = new absl::BitGen();
  uint64_t value;
  {
    absl::MutexLock lock(&mu);
    value = absl::Uniform<uint64_t>(*bits);
  }
  return absl::StrFormat("%016x", value);
}

bool NamesRequest(absl::string_view message, absl::string_view id) {
  std::string named = absl::StrCat("request ", id);
  for (size_t at = message.find(named); at != absl::string_view::npos;
       at = message.find(named, at + 1)) {
    size_t end = at + named.size();
    if (end == message.size() || !IsPlainIdChar(message[end])) return true;
  }
  return false;
}

std::string WithRequestId(absl::string_view message, absl::string_view id) {
  if (NamesRequest(message, id)) return std::string(message);
  return absl::StrCat(message, " [request ", id, "]");
}

std::string StripRequestId(absl::string_view message) {
  constexpr absl::string_view kOpen = " [request ";
  size_t at = message.rfind(kOpen);
  if (at == absl::string_view::npos || message.empty() || message.back() != ']') {
    return std::string(message);
  }
  absl::string_view id = message.substr(at + kOpen.size());
  id.remove_suffix(1);
  bool plain = !id.empty() && id.size() <= kMaxRequestIdLength &&
               std::all_of(id.begin(), id.end(), IsPlainIdChar);
  return std::string(plain ? message.substr(0, at) : message);
}

}  // namespace onnxconvert::service
