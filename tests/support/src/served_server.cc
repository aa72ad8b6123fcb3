#include "switchboard/testing/served_server.h"

#include "switchboard/api/constants.h"

namespace switchboard::testing {

operator_logic::DirectoryEntry DirectoryUser(std::string user, std::string password,
                                             std::string prefix, int generation) {
  operator_logic::DirectoryEntry e;
  e.ns = "team";
  e.name = user;
  e.username = std::move(user);
  e.subject_prefix = std::move(prefix);
  e.passwords.push_back({.password = std::move(password), .generation = generation});
  return e;
}

std::shared_ptr<const authorizer::ServedServer> MakeServedServer(
    const ServedServerParams& params, const std::vector<operator_logic::DirectoryEntry>& entries) {
  auto s = std::make_shared<authorizer::ServedServer>();
  s->ns = params.server_ns;
  s->name = params.server_name;
  s->urls = params.urls;
  s->account = params.account;
  s->issuer = params.issuer;
  s->authorizer = {.username = std::string(api::kAuthorizerUsername),
                   .password = params.authorizer_password,
                   .bcrypt = ""};
  s->system = {.username = std::string(api::kCalloutSystemUsername),
               .password = params.system_password,
               .bcrypt = ""};
  auto d = std::make_shared<operator_logic::Directory>();
  d->server_ns = params.server_ns;
  d->server_name = params.server_name;
  d->account = params.account;
  for (const auto& e : entries) d->by_user.emplace(e.username, e);
  s->directory = d;
  return s;
}

}  // namespace switchboard::testing
