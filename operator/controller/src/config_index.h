// Which users a NatsServer's config Secret holds, parsed once per content
// (a file of 1,000 users is ~250 KB; every backend's reconcile asks whether
// its user is in it), and since which config each user is in it; and what
// the last render of each server left out, and why (a backend whose user is
// not in the file learns here whether it waits for a write or was left
// out). A derived cache of the owned-Secrets informer and of the renders,
// never a source of truth: after a restart every user counts from the first
// config this process sees, and no verdict is known before the server's
// first render. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "k8s_util.h"
#include "secret_record.h"
#include "switchboard/operator_logic/backend_policy.h"
#include "switchboard/operator_logic/config_load.h"
#include "switchboard/operator_logic/render.h"

namespace switchboard::operator_controller {

class ConfigIndex {
 public:
  struct Since {
    uint64_t order = 0;                          // of the first config carrying the user
    std::chrono::steady_clock::time_point at{};  // when this process saw that config
  };
  using Users = std::map<std::string, Since>;  // "<user>\n<bcrypt>"
  static std::string Entry(const std::string& user, const std::string& bcrypt) {
    return user + "\n" + bcrypt;
  }
  // Configs whose order is remembered, for reports that lag behind.
  static constexpr size_t kRemembered = 256;

  // The users in `secret` (a config Secret's cached record; may be null)
  // under `key`.
  std::shared_ptr<const Users> Get(const SecretRecord* secret, const std::string& key);
  // What operator_logic::DecideConfigLoad needs about user `entry` (all but
  // the patience): since when the user is in the Secret, and what a
  // reloader reports. Nothing when `secret` is null or lacks `entry`.
  operator_logic::ConfigLoadFacts LoadFacts(
      const SecretRecord* secret, const std::string& key, const std::string& entry,
      std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

  // Records what the render of server `server_key` left out. Returns the
  // backends ("<ns>/<name>") whose verdict changed (left out, back in, or
  // another reason or message): they are the ones to wake.
  std::vector<std::string> RecordRender(const std::string& server_key,
                                        const std::vector<operator_logic::Rejected>& rejected);
  // The server is gone: its verdicts too.
  void ForgetRender(const std::string& server_key);
  // What stands for `server_key` in RecordRender, ForgetRender and
  // VerdictOn when the "render" is the installations' accounts (AuthCallout
  // with isolation: Accounts) rather than the config file: its own key, so
  // IncludeFile retiring the server's file verdicts never clears it.
  static std::string AccountsKey(const std::string& server_key) { return server_key + "#accounts"; }
  struct Verdict {
    bool rendered = false;  // this process has rendered the server
    std::optional<operator_logic::LeftOut> left_out;
  };
  // The last render's verdict on user `user` of backend `backend_key`: left
  // out when the render left out that user or the whole installation.
  Verdict VerdictOn(const std::string& server_key, const std::string& backend_key,
                    const std::string& user);

 private:
  struct Entry_ {
    std::string version;  // uid@resourceVersion
    std::string hash;     // ConfigHash of data[key]
    uint64_t order = 0;
    std::shared_ptr<const Users> users;
    std::deque<std::pair<std::string, uint64_t>> orders;  // hash -> order, newest last
  };
  Entry_& Refresh(const SecretRecord& secret, const std::string& key);
  struct Omission {
    std::string user;  // "" for the whole installation
    operator_logic::LeftOut why;
    bool operator==(const Omission& o) const {
      return user == o.user && why.reason == o.why.reason && why.message == o.why.message;
    }
  };
  using Omissions = std::map<std::string, std::vector<Omission>>;  // by backend key
  std::mutex mu_;
  std::map<std::string, Entry_> by_secret_;   // "<ns>/<name>"; guarded by mu_
  std::map<std::string, Omissions> renders_;  // by server key; guarded by mu_
};

}  // namespace switchboard::operator_controller
