#include "acceptance.h"

#include <algorithm>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "nats_conf.h"
#include "switchboard/api/claims.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/names.h"
#include "switchboard/api/values.h"
#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/credentials.h"

namespace switchboard::operator_logic::internal {

Acceptance AcceptInstallations(const std::vector<Installation>& installations) {
  // Sort pointers, not installations: the input can be large.
  std::vector<const Installation*> order;
  order.reserve(installations.size());
  for (const auto& inst : installations) order.push_back(&inst);
  auto by_key = [](const Installation* a, const Installation* b) {
    if (a->ns != b->ns) return a->ns < b->ns;
    return a->name < b->name;
  };
  // Callers often pass installations in key order already (a cache kept
  // by key): checking costs one pass, sorting a sorted input many more.
  if (!std::is_sorted(order.begin(), order.end(), by_key)) {
    std::sort(order.begin(), order.end(), by_key);
  }

  Acceptance out;
  std::vector<Rejected>& rejected = out.rejected;
  // Which installation (ns/name) took a user name or a prefix first.
  std::unordered_map<std::string_view, const Installation*> users_taken;
  std::unordered_map<std::string_view, const Installation*> prefixes_taken;
  users_taken.reserve(order.size() * 2);
  prefixes_taken.reserve(order.size());
  std::vector<AcceptedInstallation>& accepted = out.accepted;
  accepted.reserve(order.size());
  std::vector<const NatsUser*>& kept_users = out.kept_users;
  kept_users.reserve(order.size() + order.size() / 4);
  auto reject = [&](const Installation* inst, std::string field, std::string message,
                    const std::string& user = "") {
    rejected.push_back({inst->ns, inst->name, std::move(field), std::move(message), user,
                        reasons::kRenderRejected});
  };
  // Prefixes and user names go to the installation that keeps the claim
  // (api/claims.h, the rules' decision); the file is still in key order.
  std::vector<const Installation*> claim_order;
  claim_order.reserve(order.size());
  int& unique = out.unique;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0 && order[i]->ns == order[i - 1]->ns && order[i]->name == order[i - 1]->name) {
      reject(order[i], "metadata.name", "appears twice in the render input; rendered once");
    } else {
      claim_order.push_back(order[i]);
      ++unique;
    }
  }
  {
    // The claims' ages built once, not in each comparison (a comparison
    // would otherwise copy four strings).
    std::vector<std::pair<api::ClaimAge, const Installation*>> ages;
    ages.reserve(claim_order.size());
    for (const Installation* inst : claim_order) {
      ages.push_back({{inst->created, {inst->ns, inst->name}}, inst});
    }
    std::stable_sort(ages.begin(), ages.end(), [](const auto& a, const auto& b) {
      return api::KeepsClaim(a.first, b.first);
    });
    for (size_t i = 0; i < ages.size(); ++i) claim_order[i] = ages[i].second;
  }
  for (const Installation* inst : claim_order) {
    // The API's checks, the rules' too (api/names.h, api/values.h).
    if (auto why = api::CheckDnsLabel(inst->ns); !why.empty()) {
      reject(inst, "metadata.namespace", api::Quote(inst->ns) + " " + why);
      continue;
    }
    if (auto why = api::CheckDnsSubdomain(inst->name); !why.empty()) {
      reject(inst, "metadata.name", api::Quote(inst->name) + " " + why);
      continue;
    }
    if (auto why = api::CheckSubjectPrefix(inst->subject_prefix); !why.empty()) {
      reject(inst, "spec.nats.subjectPrefix", why);
      continue;
    }
    if (auto problem = CheckLimits(inst->limits); !problem.field.empty()) {
      reject(inst, "spec.nats.limits." + problem.field, problem.message);
      continue;
    }
    if (inst->users.empty()) {
      reject(inst, "spec.nats.credentials", "has no credentials yet; nothing to render");
      continue;
    }
    // Users are checked one by one: during a rotation a bad new user (say,
    // a name another installation has) must not take the old user, which
    // running engines use, out of the file.
    const size_t first_kept = kept_users.size();
    for (const auto& user : inst->users) {
      if (auto why = api::CheckRenderedUsername(user.username); !why.empty()) {
        reject(inst, "spec.nats.credentials.username", why, user.username);
        continue;
      }
      if (user.username == api::kCalloutSystemUsername) {
        reject(inst, "spec.nats.credentials.username",
               "\"" + user.username +
                   "\" is Switchboard's system user (usage collection); choose another name",
               user.username);
        continue;
      }
      // Hashes come from BcryptHash; anything else is a corrupted
      // credentials Secret. Never echo it: it may be a plaintext password.
      if (!IsBcryptHash(user.bcrypt)) {
        reject(inst, "spec.nats.credentials",
               "the stored hash for user \"" + user.username +
                   "\" is not bcrypt; delete the credentials Secret to regenerate it",
               user.username);
        continue;
      }
      bool twice = false;
      for (size_t k = first_kept; k < kept_users.size(); ++k) {
        twice = twice || kept_users[k]->username == user.username;
      }
      if (twice) {
        reject(inst, "spec.nats.credentials.username",
               "user \"" + user.username +
                   "\" appears twice for this installation; delete the credentials Secret to "
                   "regenerate it",
               user.username);
        continue;
      }
      auto taken = users_taken.find(user.username);
      if (taken != users_taken.end()) {
        reject(inst, "spec.nats.credentials.username",
               "user name \"" + user.username + "\" is already used by " + taken->second->ns + "/" +
                   taken->second->name + " on this server; choose another username",
               user.username);
        continue;
      }
      kept_users.push_back(&user);
    }
    if (kept_users.size() == first_kept) continue;
    auto prefix_taken = prefixes_taken.find(inst->subject_prefix);
    if (prefix_taken != prefixes_taken.end()) {
      reject(inst, "spec.nats.subjectPrefix",
             "\"" + inst->subject_prefix + "\" is already used by " + prefix_taken->second->ns +
                 "/" + prefix_taken->second->name +
                 " on this server; installations sharing a prefix would see each other's "
                 "messages: choose another subjectPrefix");
      kept_users.resize(first_kept);
      continue;
    }
    for (size_t k = first_kept; k < kept_users.size(); ++k) {
      users_taken.emplace(kept_users[k]->username, inst);
    }
    prefixes_taken.emplace(inst->subject_prefix, inst);
    accepted.push_back({inst, first_kept, kept_users.size()});
  }

  // Back into key order: `order` is sorted, so a walk over it, not a sort.
  {
    std::vector<int> slot(installations.size(), -1);
    for (size_t i = 0; i < accepted.size(); ++i) {
      slot[static_cast<size_t>(accepted[i].inst - installations.data())] = static_cast<int>(i);
    }
    std::vector<AcceptedInstallation> sorted;
    sorted.reserve(accepted.size());
    for (const Installation* inst : order) {
      const int k = slot[static_cast<size_t>(inst - installations.data())];
      if (k >= 0) sorted.push_back(accepted[static_cast<size_t>(k)]);
    }
    accepted = std::move(sorted);
  }
  std::stable_sort(rejected.begin(), rejected.end(), [](const Rejected& a, const Rejected& b) {
    return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
  });

  return out;
}

}  // namespace switchboard::operator_logic::internal
