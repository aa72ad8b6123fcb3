// Callout Directories built by hand: entries over records of their own,
// as CollectDirectory makes them from an installation's credential state,
// for the tests of the decisions that read a Directory.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/rotation.h"

namespace switchboard::testing {

// The Directory entry CollectDirectory makes for user `user` of
// installation ns/name with this credential state (a record of its own);
// `user` defaults to the state's current user.
operator_logic::DirectoryEntry DirectoryEntryOf(std::string ns, std::string name,
                                                std::string prefix,
                                                operator_logic::CredentialState state,
                                                std::string_view user = {});

// One installation's Directory entry: namespace "team", name = user name,
// one plaintext password of `generation`.
operator_logic::DirectoryEntry DirectoryUser(std::string user, std::string password,
                                             std::string prefix, int generation = 0);

// A Directory of server ns/name and account holding `entries`.
operator_logic::Directory DirectoryOf(const std::vector<operator_logic::DirectoryEntry>& entries,
                                      std::string server_ns = "nats",
                                      std::string server_name = "main",
                                      std::string account = "HATCHET");

}  // namespace switchboard::testing
