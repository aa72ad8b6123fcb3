// Which NATS servers one authorizer replica keeps a connection to (pure).
//
// nats-server delivers a callout request through the interest it knows at
// that moment: its own clients' subscriptions, and the ones its routes
// told it about. A server that just started, or whose routes are not yet
// back, knows none but its own; a replica with one connection somewhere
// in the cluster leaves every other server depending on its routes. So a
// replica connects to every server ("members", one connection each, each
// pinned to its URL and subscribed): a restart then takes that server's
// subscriptions only, and a client that reconnects elsewhere is answered
// by a local subscriber.
//
// The servers come from the servers themselves: the seeds (the
// NatsServer's spec.url) plus the client URLs the cluster announces
// (INFO connect_urls, pubsub::NatsClient::DiscoveredServers). One server
// reached through two URLs (a Service URL and its pod's, two interfaces)
// keeps one member: the one under a discovered URL (a server's own
// address), else the first URL; the other URL is remembered as an alias of
// that server id and not connected again while a member is on that id.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "switchboard/operator_logic/time_util.h"

namespace switchboard::authorizer {

struct MemberState {
  std::string url;
  // The id of the server it is connected to now; "" while not connected.
  std::string server_id;
  // Since when the URL is neither a seed nor announced; nullopt while it is.
  std::optional<operator_logic::Time> unwanted_since;
};

struct MemberPlan {
  std::vector<std::string> add;     // new members, in URL order
  std::vector<std::string> remove;  // members to close
  // Every member kept, with its new unwanted_since (url -> since).
  std::map<std::string, std::optional<operator_logic::Time>> unwanted_since;
  // url -> server id: URLs not connected because a member already is on
  // that server.
  std::map<std::string, std::string> aliases;
};

// `seeds` and `discovered` as given (blank entries ignored; a discovered
// URL takes the seeds' scheme when they say tls://, so no member is less
// secure than the seeds); a member that
// is neither for `forget_after` while not connected is removed (a server
// that restarts is unannounced while it is down: its member stays, pinned,
// and is back as soon as the server is). A connected member is never
// removed for being unannounced: a server it reaches is alive.
MemberPlan PlanMembers(const std::vector<std::string>& seeds,
                       const std::vector<std::string>& discovered,
                       const std::vector<MemberState>& members,
                       const std::map<std::string, std::string>& aliases, operator_logic::Time now,
                       std::chrono::milliseconds forget_after);

// "nats://h:p", "tls://h:p", "h:p" -> "h:p": how URLs are compared.
std::string HostPort(const std::string& url);

}  // namespace switchboard::authorizer
