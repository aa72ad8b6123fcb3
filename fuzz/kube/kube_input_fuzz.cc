// Everything the kube client parses from outside: kubeconfig files, API
// server answers (Status bodies, Warning headers) and watch streams. None of
// it may crash, hang or leak, whatever the bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "switchboard/kube/config.h"
#include "switchboard/kube/request.h"
#include "switchboard/kube/watch.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace switchboard::kube;
  std::string_view in(reinterpret_cast<const char*>(data), size);

  // Kubeconfig: relative file references resolve under a directory that
  // does not exist, so the fuzzer never reads real files.
  auto cfg = Config::FromKubeconfigText(std::string(in), "/nonexistent-fuzz-dir");
  (void)cfg;

  (void)StatusFromResponse(400 + static_cast<int>(size % 200), in);
  (void)ParseWarningHeader(in);

  // A watch stream cut into chunks of varying size.
  WatchLineDecoder decoder;
  size_t chunk = 1 + (size % 7);
  for (size_t off = 0; off < in.size(); off += chunk) {
    decoder.Feed(in.substr(off, chunk), [](std::string_view line) {
      auto ev = ParseWatchEvent(line);
      if (ev.ok()) (void)ObjectKeyOf(ev->object);
      return true;
    });
  }
  return 0;
}
