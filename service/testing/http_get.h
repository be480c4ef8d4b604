#ifndef ONNX_CONVERT_SERVICE_TESTING_HTTP_GET_H_
#define ONNX_CONVERT_SERVICE_TESTING_HTTP_GET_H_

// Plain-socket HTTP for tests of the metrics endpoint (no client library).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"

namespace onnxconvert::service::testing {

// The response (status line, headers and body) of GET `path` from
// 127.0.0.1:`port` over HTTP/1.0, or "" when the connection fails.
inline std::string HttpGet(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    std::string request = absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) response.append(buffer, n);
    }
  }
  close(fd);
  return response;
}

// The body of an HTTP response (after the blank line), or "".
inline std::string HttpBody(const std::string& response) {
  size_t at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}

// The lowest port the kernel hands out for bind(0) and connect(), from
// /proc/sys/net/ipv4/ip_local_port_range (32768 when it cannot be read).
inline int EphemeralPortFloor() {
  int low = 32768;
  if (FILE* range = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    if (std::fscanf(range, "%d", &low) != 1) low = 32768;
    std::fclose(range);
  }
  return low;
}

// Whether 127.0.0.1:`port` can be bound now (bound and released).
inline bool LoopbackPortIsFree(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool free = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return free;
}

// A TCP port on 127.0.0.1 free when this returns, or 0. It is drawn from
// below the kernel's ephemeral range, so that servers started with --port=0
// and outgoing connections of tests running beside this one (which take
// ports from that range) cannot take it before the caller binds it.
inline int FreeLoopbackPort() {
  static std::mt19937 random(static_cast<unsigned>(getpid()) ^
                             static_cast<unsigned>(std::random_device{}()));
  int high = std::min(EphemeralPortFloor(), 65536) - 1;
  constexpr int kLow = 10000;
  if (high <= kLow) return 0;
  std::uniform_int_distribution<int> ports(kLow, high);
  for (int attempt = 0; attempt < 100; ++attempt) {
    int port = ports(random);
    if (LoopbackPortIsFree(port)) return port;
  }
  return 0;
}

}  // namespace onnxconvert::service::testing

#endif  // ONNX_CONVERT_SERVICE_TESTING_HTTP_GET_H_
