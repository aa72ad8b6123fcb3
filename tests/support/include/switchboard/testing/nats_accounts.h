// What a local cluster of nats-server-callout processes on an operator's
// static config holds and shows, for the e2e fixtures that run one
// (CalloutNats, CalloutClusterE2E): which static config a body is, each
// server's own resolver store in operator mode (one config body names one
// resolver directory; server i of a local cluster stores under
// StoreDir(dir, i) instead), the account JWTs a store holds, and the client
// connections every server's /connz shows with their accounts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "switchboard/testing/nats_cluster.h"

namespace switchboard::e2e {

// The static config of each AuthCallout isolation, by what only it holds.
bool IsCalloutConfig(const std::string& body);       // auth_callout
bool IsOperatorModeConfig(const std::string& body);  // default_sentinel

// --- Resolver stores (operator mode) ---------------------------------------
// Server i's store, beside `resolver_dir` (the directory the NatsServer
// names).
std::string StoreDir(const std::string& resolver_dir, int i);
// `body` for each of `servers` servers: its own store in place of the
// quoted `resolver_dir`; the same body for all when it names none.
std::vector<std::string> BodiesWithStores(const std::string& body, const std::string& resolver_dir,
                                          int servers);
// The account JWTs a store holds (a directory of "<account key>.jwt"), by
// account key; empty when the directory does not exist.
std::map<std::string, std::string> StoredJwts(const std::string& store);
// Whether `store` holds `account`'s JWT.
bool StoreHolds(const std::string& store, const std::string& account);
// The claims of a JWT (its payload, decoded) without what every signing
// changes (iat, jti): two JWTs of one account with equal ClaimsOf say the
// same. "" when `jwt` is not three dot-separated parts with a JSON payload.
std::string ClaimsOf(const std::string& jwt);

// --- Connections -----------------------------------------------------------
// One client connection a server's /connz shows.
struct ClientConn {
  int server = -1;      // index in the cluster
  uint64_t cid = 0;     // the server's connection id
  std::string user;     // authorized_user without "#<generation>"
  std::string account;  // "" for the global account, which connz does not name
};
// Every client connection of every running server of `cluster` with an
// authorized user (the operator's probes included). `unanswered`, when
// given, counts the running servers whose /connz did not answer (their
// connections are missing from the list).
std::vector<ClientConn> Clients(testing::NatsCluster& cluster, int* unanswered = nullptr);
// /varz config_load_time of each server: moves with every (re)load.
std::vector<std::optional<std::string>> LoadTimes(const testing::NatsCluster& cluster);

}  // namespace switchboard::e2e
