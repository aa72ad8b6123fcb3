// A ServedServer (authorizer/served.h) built by hand, for the tests that
// run a ServerSession against real nats-servers: what the authorizer would
// build from a callout Secret with these passwords and a Directory of these
// entries, without the caches. The passwords are plaintext (a
// CalloutConfig with the same passwords is the server's side).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/authorizer/served.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/testing/directory.h"

namespace switchboard::testing {

struct ServedServerParams {
  std::string urls;  // the seeds, comma-separated
  std::shared_ptr<const natsauth::KeyPair> issuer;
  std::string authorizer_password, system_password;
  std::string server_ns = "nats", server_name = "main", account = "HATCHET";
};

std::shared_ptr<const authorizer::ServedServer> MakeServedServer(
    const ServedServerParams& params, const std::vector<operator_logic::DirectoryEntry>& entries);

}  // namespace switchboard::testing
