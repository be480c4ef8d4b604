#include "service/transport_counts.h"

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "grpc/grpc.h"
#include "grpc/support/alloc.h"

namespace onnxconvert::service {
namespace {

// Sums the values of every `"key":"N"` in `json` (channelz writes 64-bit
// counts as strings, and leaves out counts of zero); false if none.
bool SumField(absl::string_view json, absl::string_view key, int64_t& sum) {
  std::string pattern = absl::StrCat("\"", key, "\":\"");
  bool found = false;
  for (size_t at = json.find(pattern); at != absl::string_view::npos;
       at = json.find(pattern, at + 1)) {
    size_t begin = at + pattern.size();
    size_t end = json.find('"', begin);
    int64_t value = 0;
    if (end == absl::string_view::npos ||
        !absl::SimpleAtoi(json.substr(begin, end - begin), &value)) {
      continue;
    }
    sum += value;
    found = true;
  }
  return found;
}

}  // namespace

std::optional<TransportCalls> ParseChannelzServers(absl::string_view json) {
  if (json.find("\"serverId\"") == absl::string_view::npos) return std::nullopt;
  TransportCalls calls;
  SumField(json, "callsStarted", calls.started);
  SumField(json, "callsFailed", calls.failed);
  return calls;
}

std::optional<TransportCalls> TransportCallCounts() {
  char* json = grpc_channelz_get_servers(0);
  if (json == nullptr) return std::nullopt;
  std::optional<TransportCalls> calls = ParseChannelzServers(json);
  gpr_free(json);
  return calls;
}

}  // namespace onnxconvert::service
