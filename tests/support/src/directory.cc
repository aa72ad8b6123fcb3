#include "switchboard/testing/directory.h"

#include <memory>

namespace switchboard::testing {

operator_logic::DirectoryEntry DirectoryEntryOf(std::string ns, std::string name,
                                                std::string prefix,
                                                operator_logic::CredentialState state,
                                                std::string_view user) {
  auto record = std::make_shared<operator_logic::InstallationRecord>();
  record->ns = std::move(ns);
  record->name = std::move(name);
  record->subject_prefix = std::move(prefix);
  const std::string username = user.empty() ? state.current.username : std::string(user);
  record->credentials = std::make_shared<const operator_logic::CredentialState>(std::move(state));
  return operator_logic::DirectoryEntry(std::move(record), username);
}

operator_logic::DirectoryEntry DirectoryUser(std::string user, std::string password,
                                             std::string prefix, int generation) {
  operator_logic::CredentialState state;
  state.current = {.username = user, .password = std::move(password), .bcrypt = ""};
  state.rotation_count = generation;
  return DirectoryEntryOf("team", user, std::move(prefix), std::move(state));
}

operator_logic::Directory DirectoryOf(const std::vector<operator_logic::DirectoryEntry>& entries,
                                      std::string server_ns, std::string server_name,
                                      std::string account) {
  operator_logic::Directory d;
  d.server_ns = std::move(server_ns);
  d.server_name = std::move(server_name);
  d.account = std::move(account);
  for (const auto& e : entries) d.Add(e);
  return d;
}

}  // namespace switchboard::testing
