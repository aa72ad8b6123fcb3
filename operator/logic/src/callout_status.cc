#include "switchboard/operator_logic/callout_status.h"

#include <algorithm>

#include "switchboard/api/constants.h"

namespace switchboard::operator_logic {
namespace ct = condition_types;
using nlohmann::json;

namespace {

// At most this many server names in a message (a cluster may be large).
constexpr size_t kNamedServers = 5;

std::string NameList(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < kNamedServers; i++) {
    out += (i ? ", " : "") + names[i];
  }
  if (names.size() > kNamedServers) {
    out += " and " + std::to_string(names.size() - kNamedServers) + " more";
  }
  return out;
}

struct Reply {
  std::string server;  // name, else id
  int64_t subscribers = 0;
};

std::optional<Reply> ParseReply(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  auto server = j.find("server");
  auto data = j.find("data");
  if (server == j.end() || !server->is_object() || data == j.end() || !data->is_object()) {
    return std::nullopt;
  }
  auto total = data->find("total");
  if (total == data->end() || !total->is_number_integer()) return std::nullopt;
  Reply r;
  r.server = server->value("name", "");
  if (r.server.empty()) r.server = server->value("id", "");
  if (r.server.empty()) return std::nullopt;
  r.subscribers = total->get<int64_t>();
  return r;
}

}  // namespace

std::string AuthorizerPingBody(std::string_view account) {
  return json{{"account", std::string(account)},
              {"subscriptions", true},
              {"test", std::string(api::kAuthCalloutSubject)}}
      .dump();
}

std::string NotOnStaticConfigMessage(std::string_view config_secret, std::string_view error) {
  return "the NATS servers do not run the static config in Secret " + std::string(config_secret) +
         " yet (nats-server cannot reload into or out of operator mode): restart them one at a "
         "time on it, as a rolling restart; until then they keep serving the previous config (" +
         std::string(error) + ")";
}

AuthorizerAvailability DecideAuthorizerAvailability(
    const Result<std::vector<std::string>>& replies) {
  AuthorizerAvailability a;
  if (!replies.ok()) {
    a.status = "Unknown";
    a.reason = std::string(reasons::kServerUnreachable);
    a.message = "could not ask the NATS servers as " + std::string(api::kCalloutSystemUsername) +
                ": " + replies.status().message();
    return a;
  }
  std::vector<std::string> without;
  int unreadable = 0;
  for (const auto& text : *replies) {
    auto r = ParseReply(text);
    if (!r) {
      unreadable++;
      continue;
    }
    a.servers++;
    if (r->subscribers > 0) {
      a.authorizers++;
    } else {
      without.push_back(r->server);
    }
  }
  std::sort(without.begin(), without.end());
  const std::string unread =
      unreadable > 0 ? "; " + std::to_string(unreadable) + " unreadable repl(ies) not counted" : "";
  if (a.servers == 0) {
    a.status = "Unknown";
    a.reason = std::string(reasons::kServerUnreachable);
    a.message = "no NATS server answered " + std::string(kAuthorizerPingSubject) + " as " +
                std::string(api::kCalloutSystemUsername) + unread;
    return a;
  }
  const std::string counts =
      std::to_string(a.authorizers) + " of " + std::to_string(a.servers) + " server(s)";
  if (without.empty()) {
    a.status = "True";
    a.reason = std::string(reasons::kAuthorizersSubscribed);
    a.message = counts + " have an authorizer subscribed on " +
                std::string(api::kAuthCalloutSubject) + unread;
    return a;
  }
  if (a.authorizers > 0) {
    // A queue subscription's interest crosses the cluster's routes: a
    // server without a local authorizer still has its requests answered
    // by one on another server. Available, but the message names the
    // servers that depend on their routes for it.
    a.status = "True";
    a.reason = std::string(reasons::kAuthorizersSubscribed);
    a.message = counts + " have an authorizer subscribed on " +
                std::string(api::kAuthCalloutSubject) + "; " + NameList(without) +
                " reach one over the cluster's routes" + unread;
    return a;
  }
  a.status = "False";
  a.reason = std::string(reasons::kNoAuthorizer);
  a.message = "no authorizer is connected to " + NameList(without) + " (" + counts +
              " have one): new connections and reconnects fail with Authorization Violation; "
              "check the switchboard-authorizer pods" +
              unread;
  return a;
}

json ComputeCalloutServerStatus(const json& previous, const CalloutServerStatusInput& in,
                                std::string_view now) {
  const json prev = previous.is_object() ? previous : json::object();
  std::vector<Condition> conditions = ConditionsFromJson(prev.value("conditions", json::array()));
  std::erase_if(conditions, [](const Condition& c) { return c.type == ct::kConfigFits; });
  Condition ready{.type = std::string(ct::kReady), .observed_generation = in.generation};
  if (in.failure_reason.empty()) {
    ready.status = "True";
    ready.reason = std::string(reasons::kCalloutConfigured);
    ready.message = "static config and callout keys written; " + std::to_string(in.installations) +
                    " installation(s) authorized by the authorizer";
  } else {
    ready.status = "False";
    ready.reason = in.failure_reason;
    ready.message = in.failure_message;
  }
  SetCondition(conditions, std::move(ready), now);

  const json prev_callout = prev.value("authCallout", json::object());
  json callout = json::object();
  callout["issuer"] = !in.issuer.empty() ? json(in.issuer) : prev_callout.value("issuer", json());
  if (callout["issuer"].is_null()) callout.erase("issuer");
  callout["account"] = in.account;
  if (in.authorizers) {
    Condition avail{.type = std::string(ct::kAuthorizerAvailable),
                    .status = in.authorizers->status,
                    .reason = in.authorizers->reason,
                    .message = in.authorizers->message,
                    .observed_generation = in.generation};
    SetCondition(conditions, std::move(avail), now);
    callout["authorizers"] = in.authorizers->authorizers;
    callout["servers"] = in.authorizers->servers;
  } else {
    for (const char* k : {"authorizers", "servers"}) {
      if (prev_callout.contains(k)) callout[k] = prev_callout[k];
    }
  }
  std::stable_sort(conditions.begin(), conditions.end(),
                   [](const Condition& a, const Condition& b) {
                     return a.type == ct::kReady && b.type != ct::kReady;
                   });
  json status = {{"observedGeneration", in.generation},
                 {"installations", in.installations},
                 {"authCallout", callout},
                 {"conditions", ToJson(conditions)}};
  if (!in.config_hash.empty()) {
    status["configHash"] = in.config_hash;
  } else if (prev.contains("configHash")) {
    status["configHash"] = prev["configHash"];
  }
  return status;
}

json WithoutCalloutStatus(const json& previous) {
  if (!previous.is_object()) return previous;
  json out = previous;
  out.erase("authCallout");
  if (auto c = out.find("conditions"); c != out.end() && c->is_array()) {
    json kept = json::array();
    for (const auto& x : *c) {
      if (!(x.is_object() && x.value("type", "") == ct::kAuthorizerAvailable)) kept.push_back(x);
    }
    *c = std::move(kept);
  }
  return out;
}

std::optional<StatusEvent> AuthorizerAvailableEvent(const json& previous, const json& next) {
  const auto before = ConditionOf(previous, ct::kAuthorizerAvailable);
  const auto after = ConditionOf(next, ct::kAuthorizerAvailable);
  if (!after) return std::nullopt;
  const bool was_false = before && before->status == "False";
  if (after->status == "False" && !(was_false && before->reason == after->reason)) {
    return StatusEvent{.warning = true, .reason = after->reason, .message = after->message};
  }
  if (after->status == "True" && was_false) {
    return StatusEvent{.warning = false, .reason = after->reason, .message = after->message};
  }
  return std::nullopt;
}

}  // namespace switchboard::operator_logic
