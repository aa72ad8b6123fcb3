#include "switchboard/authorizer/connz.h"

#include <nlohmann/json.hpp>

namespace switchboard::authorizer {

namespace logic = ::switchboard::operator_logic;

std::string ConnzRequest(std::string_view account, int offset, int limit) {
  return logic::UsageConnzRequest(account, offset, limit);
}

std::string PingConnzSubject() { return std::string(logic::kPingConnzSubject); }
std::string ServerConnzSubject(std::string_view server_id) {
  return logic::ServerConnzSubject(server_id);
}
std::string KickSubject(std::string_view server_id) {
  return "$SYS.REQ.SERVER." + std::string(server_id) + ".KICK";
}
std::string KickRequest(uint64_t cid) { return nlohmann::json{{"cid", cid}}.dump(); }

Result<ConnzPage> ParseConnzReply(std::string_view body) {
  auto sampled = logic::ParseUsageConnz(body);
  if (!sampled.ok()) return sampled.status();
  ConnzPage page;
  page.server_id = sampled->server_id;
  page.total = sampled->total;
  page.offset = sampled->offset;
  page.connections.reserve(sampled->connections.size());
  for (auto& c : sampled->connections) {
    page.connections.push_back({.server_id = std::move(c.server_id),
                                .cid = c.cid,
                                .account = std::move(c.account),
                                .name = std::move(c.user)});
  }
  return page;
}

Status ParseKickReply(std::string_view body) {
  auto reply = logic::ParseSysReply(body, "KICK");
  if (reply.ok()) return Status::Ok();
  if (reply.status().code() == StatusCode::kUnavailable &&
      reply.status().message().find("no such client") != std::string::npos) {
    return Status::NotFound(reply.status().message());
  }
  return reply.status();
}

}  // namespace switchboard::authorizer
