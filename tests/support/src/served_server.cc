#include "switchboard/testing/served_server.h"

#include "switchboard/api/constants.h"

namespace switchboard::testing {

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
  s->directory = std::make_shared<const operator_logic::Directory>(
      DirectoryOf(entries, params.server_ns, params.server_name, params.account));
  return s;
}

}  // namespace switchboard::testing
