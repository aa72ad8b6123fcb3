// Which users a NatsServer's config Secret holds, parsed once per content
// (a file of 1,000 users is ~250 KB; every backend's reconcile asks whether
// its user is in it), and since which config each user is in it. A derived
// cache of the owned-Secrets informer, never a source of truth: after a
// restart every user counts from the first config this process sees.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "k8s_util.h"
#include "switchboard/operator_logic/config_load.h"

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

  // The users in `secret` (a config Secret; may be null) under `key`.
  std::shared_ptr<const Users> Get(const json* secret, const std::string& key);
  // When this process first saw the current content of the Secret (a probe
  // refused soon after means "not reloaded yet", not "wrong password").
  std::chrono::steady_clock::time_point SeenAt(const json* secret);
  // What operator_logic::DecideConfigLoad needs about user `entry` (all but
  // the patience). Nothing reported when `secret` is null or lacks `entry`.
  operator_logic::ConfigLoadFacts LoadFacts(
      const json* secret, const std::string& key, const std::string& entry,
      std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

 private:
  struct Entry_ {
    std::string version;  // uid@resourceVersion
    std::string hash;     // ConfigHash of data[key]
    uint64_t order = 0;
    std::shared_ptr<const Users> users;
    std::deque<std::pair<std::string, uint64_t>> orders;  // hash -> order, newest last
    std::chrono::steady_clock::time_point seen;
  };
  Entry_& Refresh(const json& secret, const std::string& key);
  std::mutex mu_;
  std::map<std::string, Entry_> by_secret_;  // "<ns>/<name>"; guarded by mu_
};

}  // namespace switchboard::operator_controller
