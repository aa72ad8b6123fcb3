// The system account's side of the sweep, as pure text: the CONNZ request
// that lists an account's connections with their user names, its reply
// read into operator_logic::LiveConnection, and the KICK request that
// closes one connection. Formats: nats-server's monitor (ConnzOptions,
// Connz) and its $SYS.REQ.SERVER.<id>.KICK handler. CONNZ is read once,
// by operator_logic's usage reader (usage.h), which the usage collector
// pages with too; this is the sweep's view of it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/usage.h"

namespace switchboard::authorizer {

// Connections per CONNZ page: the one figure, the collector's too.
inline constexpr int kConnzPageSize = operator_logic::kConnzPageSize;

// {"auth":true,"acc":<account>,"offset":N,"limit":N}: `auth` makes the
// server name each connection's authorized user.
std::string ConnzRequest(std::string_view account, int offset, int limit = kConnzPageSize);
// "$SYS.REQ.SERVER.PING.CONNZ" (every server answers) and
// "$SYS.REQ.SERVER.<id>.CONNZ" (one server: the next pages).
std::string PingConnzSubject();
std::string ServerConnzSubject(std::string_view server_id);

struct ConnzPage {
  std::string server_id;
  int64_t total = 0;   // connections matching the filter on that server
  int64_t offset = 0;  // of this page
  std::vector<operator_logic::LiveConnection> connections;  // name: the authorized user
};
// One server's reply. kInvalidArgument when it is not a CONNZ reply;
// kUnavailable carrying the server's error when it answered with one.
Result<ConnzPage> ParseConnzReply(std::string_view body);

// "$SYS.REQ.SERVER.<id>.KICK" and {"cid":N}.
std::string KickSubject(std::string_view server_id);
std::string KickRequest(uint64_t cid);
// OK, or the server's error (a connection already gone is kNotFound).
Status ParseKickReply(std::string_view body);

}  // namespace switchboard::authorizer
