// The webhook's HTTP layer without sockets: arbitrary bytes as a client
// would send them on one connection (request lines, headers, Content-Length
// and chunked bodies, pipelined requests), through the same RequestReader
// and RequestHandler the server uses. The first input byte picks how the
// stream is cut into reads, so partial headers and chunk boundaries at every
// offset are exercised. Aborts when:
//   - a complete request's body exceeds the limit, or a refusal is not
//     400/413/431;
//   - the requests framed depend on how the bytes were cut (one read or
//     many);
//   - an answer is not a known HTTP status, or a JSON answer does not parse.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "http_handler.h"
#include "http_reader.h"
#include "switchboard/common/log.h"
#include "switchboard/webhook_admission/context_source.h"
#include "switchboard/webhook_server/metrics.h"

namespace {

namespace wh = switchboard::webhook_server;

constexpr size_t kMaxBody = 4096;  // small, so the fuzzer reaches it
constexpr size_t kMaxHeader = 1024;

struct Outcome {
  int state;  // RequestReader::State
  std::string method, target, body;
  int status = 0;
  bool operator==(const Outcome&) const = default;
};

void Check(bool ok) {
  if (!ok) std::abort();
}

std::vector<Outcome> Run(std::string_view bytes, size_t cut) {
  static switchboard::webhook_admission::StaticContextSource context;
  static wh::Metrics metrics;
  static wh::RequestHandler handler(kMaxBody, context, metrics);
  wh::RequestReader reader(wh::HttpLimits{kMaxBody, kMaxHeader});
  std::vector<Outcome> out;
  size_t pos = 0;
  // At most 64 requests per input: pipelining is covered, run time bounded.
  while (out.size() < 64) {
    auto state = reader.Parse();
    if (state == wh::RequestReader::State::kNeedMore) {
      if (pos >= bytes.size()) break;
      size_t n = std::min(cut, bytes.size() - pos);
      reader.Append(bytes.substr(pos, n));
      pos += n;
      continue;
    }
    if (state == wh::RequestReader::State::kRefused) {
      int s = reader.refusal().status;
      Check(s == 400 || s == 413 || s == 431);
      // Refused stays refused: the rest of the stream cannot be framed.
      Check(reader.Parse() == wh::RequestReader::State::kRefused);
      auto res = handler.Refused(reader.refusal(), "fuzz");
      Check(res.status == s);
      Check(!nlohmann::json::parse(res.body, nullptr, false).is_discarded());
      out.push_back({static_cast<int>(state), "", "", "", s});
      break;
    }
    wh::HttpRequest req = reader.TakeRequest();
    Check(req.body.size() <= kMaxBody);
    auto res = handler.Handle(req, "fuzz");
    Check(res.status >= 200 && res.status <= 599);
    if (res.content_type == "application/json") {
      Check(!nlohmann::json::parse(res.body, nullptr, false).is_discarded());
    }
    out.push_back({static_cast<int>(state), req.method, req.target, req.body, res.status});
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bool quiet = [] {
    switchboard::log::SetLevel(switchboard::log::Level::kError);
    return true;
  }();
  (void)quiet;
  if (size == 0) return 0;
  size_t cut = 1 + data[0] % 97;  // 1..97 bytes per read
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto whole = Run(bytes, bytes.size() + 1);
  auto pieces = Run(bytes, cut);
  // Cut into reads, the stream frames the same requests. Only where it is
  // broken may the outcomes differ: whether a malformed header that never
  // ends is refused at once or waits for more bytes (until the server's
  // request deadline) depends on where the reads were cut, and so may which
  // limit or syntax error is noticed first. Beast also counts a header
  // block of exactly the limit plus its final CRLF differently when it
  // arrives in one piece, so a request at the header limit may be taken in
  // one run and refused with 431 in the other. Any other request complete
  // in one run and refused in the other would be a framing bug.
  constexpr int kRefused = static_cast<int>(wh::RequestReader::State::kRefused);
  size_t common = std::min(whole.size(), pieces.size());
  for (size_t i = 0; i < common; ++i) {
    bool whole_refused = whole[i].state == kRefused;
    bool pieces_refused = pieces[i].state == kRefused;
    if (whole_refused != pieces_refused) {
      const Outcome& refused = whole_refused ? whole[i] : pieces[i];
      Check(refused.status == 431);
      return 0;  // the runs diverge from here on
    }
    if (!whole_refused) Check(pieces[i] == whole[i]);
  }
  const auto& longer = whole.size() > pieces.size() ? whole : pieces;
  Check(longer.size() <= common + 1);
  if (longer.size() == common + 1) Check(longer.back().state == kRefused);
  return 0;
}
