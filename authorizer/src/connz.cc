#include "switchboard/authorizer/connz.h"

#include <nlohmann/json.hpp>

namespace switchboard::authorizer {

using nlohmann::json;

namespace {

// The server's error in a $SYS.REQ.SERVER response, or nullptr.
const json* ErrorOf(const json& reply) {
  auto it = reply.find("error");
  return it != reply.end() && it->is_object() ? &*it : nullptr;
}

std::string Describe(const json& error) {
  std::string d = error.value("description", "");
  return d.empty() ? "error " + std::to_string(error.value("code", 0)) : d;
}

}  // namespace

std::string ConnzRequest(std::string_view account, int offset, int limit) {
  return json{{"auth", true}, {"acc", account}, {"offset", offset}, {"limit", limit}}.dump();
}

std::string PingConnzSubject() { return "$SYS.REQ.SERVER.PING.CONNZ"; }
std::string ServerConnzSubject(std::string_view server_id) {
  return "$SYS.REQ.SERVER." + std::string(server_id) + ".CONNZ";
}
std::string KickSubject(std::string_view server_id) {
  return "$SYS.REQ.SERVER." + std::string(server_id) + ".KICK";
}
std::string KickRequest(uint64_t cid) { return json{{"cid", cid}}.dump(); }

Result<ConnzPage> ParseConnzReply(std::string_view body) {
  json reply = json::parse(body, nullptr, false);
  if (!reply.is_object()) return Status::InvalidArgument("CONNZ reply is not a JSON object");
  if (const json* error = ErrorOf(reply)) {
    return Status::Unavailable("CONNZ refused by the server: " + Describe(*error));
  }
  auto data = reply.find("data");
  if (data == reply.end() || !data->is_object()) {
    return Status::InvalidArgument("CONNZ reply has no data object");
  }
  ConnzPage page;
  page.server_id = data->value("server_id", "");
  if (page.server_id.empty() && reply.contains("server") && reply["server"].is_object()) {
    page.server_id = reply["server"].value("id", "");
  }
  if (page.server_id.empty()) return Status::InvalidArgument("CONNZ reply names no server id");
  page.total = data->value("total", int64_t{0});
  page.offset = data->value("offset", int64_t{0});
  auto conns = data->find("connections");
  if (conns != data->end() && conns->is_array()) {
    for (const auto& c : *conns) {
      if (!c.is_object() || !c.contains("cid") || !c["cid"].is_number_unsigned()) continue;
      page.connections.push_back({.server_id = page.server_id,
                                  .cid = c["cid"].get<uint64_t>(),
                                  .account = c.value("account", ""),
                                  .name = c.value("authorized_user", "")});
    }
  }
  return page;
}

Status ParseKickReply(std::string_view body) {
  json reply = json::parse(body, nullptr, false);
  if (!reply.is_object()) return Status::InvalidArgument("KICK reply is not a JSON object");
  if (const json* error = ErrorOf(reply)) {
    std::string d = Describe(*error);
    if (d.find("no such client") != std::string::npos) return Status::NotFound(d);
    return Status::Unavailable("KICK refused by the server: " + d);
  }
  return Status::Ok();
}

}  // namespace switchboard::authorizer
