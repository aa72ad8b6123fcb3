#include "switchboard/operator_logic/render.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "nats_conf.h"
#include "switchboard/api/claims.h"
#include "switchboard/api/limits.h"
#include "switchboard/api/quantity.h"
#include "switchboard/operator_logic/credentials.h"

namespace switchboard::operator_logic {
namespace {

using internal::AppendQuoted;

// Rendered when no installation is: NATS treats an empty user list as "no
// authentication". The hash is well-formed bcrypt whose checksum no password
// produces in practice (2^-184), and the user may do nothing anyway.
constexpr std::string_view kPlaceholderUser =
    "{user: \"switchboard-no-installations\", password: "
    "\"$2b$11$.....................................................\", "
    "permissions: {publish: {deny: [\">\"]}, subscribe: {deny: [\">\"]}}}";

void AppendUser(std::string& out, const NatsUser& user, std::string_view prefix) {
  out += "{user: ";
  AppendQuoted(out, user.username);
  out += ", password: ";
  AppendQuoted(out, user.bcrypt);
  out += ", permissions: {publish: {allow: [";
  // "<prefix>.*": topic names are one token, so `*` isolates even nested
  // prefixes (a.b.* does not match a.b.c.x).
  // The prefix was checked (no quote or backslash); escaping is a second
  // line of defence.
  out.push_back('"');
  internal::AppendEscaped(out, prefix);
  out += ".*\"]}, subscribe: {allow: [\"";
  internal::AppendEscaped(out, prefix);
  out += ".*\"]}}}";
}

}  // namespace

std::string Rejected::ToString() const {
  return ns + "/" + name + ": " + (field.empty() ? "" : field + ": ") + message;
}

Result<Isolation> ParseIsolation(std::string_view text) {
  if (text.empty() || text == "Permissions") return Isolation::kPermissions;
  if (text == "Accounts") return Isolation::kAccounts;
  return Status::InvalidArgument("spec.isolation: \"" + std::string(text) +
                                 "\" is not an isolation mode; use Permissions or Accounts");
}

std::string_view IsolationName(Isolation isolation) {
  return isolation == Isolation::kAccounts ? "Accounts" : "Permissions";
}

Result<RenderedConfig> RenderNatsConfig(const RenderInput& input) {
  if (auto why = internal::CheckObjectName(input.server_ns); !why.empty()) {
    return Status::InvalidArgument("metadata.namespace: " + why);
  }
  if (auto why = internal::CheckObjectName(input.server_name); !why.empty()) {
    return Status::InvalidArgument("metadata.name: " + why);
  }
  if (input.max_payload < api::kEngineMaxPayload || input.max_payload > api::kNatsMaxPayloadLimit) {
    const std::string min = api::FormatBytes(api::kEngineMaxPayload);
    const std::string max = api::FormatBytes(api::kNatsMaxPayloadLimit);
    return Status::InvalidArgument(
        "spec.maxPayload: " + std::to_string(input.max_payload) + " bytes is outside " + min +
        ".." + max + "; Hatchet's engine needs at least " + min + " (" +
        std::to_string(api::kEngineMaxPayload) + ") and NATS allows at most " + max);
  }

  // Sort pointers, not installations: the input can be large.
  std::vector<const Installation*> order;
  order.reserve(input.installations.size());
  for (const auto& inst : input.installations) order.push_back(&inst);
  auto by_key = [](const Installation* a, const Installation* b) {
    if (a->ns != b->ns) return a->ns < b->ns;
    return a->name < b->name;
  };
  std::sort(order.begin(), order.end(), by_key);

  RenderedConfig result;
  // Which installation (ns/name) took a user name or a prefix first.
  std::unordered_map<std::string_view, const Installation*> users_taken;
  std::unordered_map<std::string_view, const Installation*> prefixes_taken;
  users_taken.reserve(order.size() * 2);
  prefixes_taken.reserve(order.size());
  // Rendered installations, each with its range of kept users.
  struct Accepted {
    const Installation* inst;
    size_t begin, end;  // into kept_users
  };
  std::vector<Accepted> accepted;
  accepted.reserve(order.size());
  std::vector<const NatsUser*> kept_users;
  kept_users.reserve(order.size() + order.size() / 4);
  auto reject = [&](const Installation* inst, std::string field, std::string message) {
    result.rejected.push_back({inst->ns, inst->name, std::move(field), std::move(message)});
  };
  // Prefixes and user names go to the installation that keeps the claim
  // (api/claims.h, the rules' decision); the file is still in key order.
  std::vector<const Installation*> claim_order;
  claim_order.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0 && order[i]->ns == order[i - 1]->ns && order[i]->name == order[i - 1]->name) {
      reject(order[i], "metadata.name", "appears twice in the render input; rendered once");
    } else {
      claim_order.push_back(order[i]);
    }
  }
  std::stable_sort(
      claim_order.begin(), claim_order.end(), [](const Installation* a, const Installation* b) {
        return api::KeepsClaim({a->created, {a->ns, a->name}}, {b->created, {b->ns, b->name}});
      });
  for (const Installation* inst : claim_order) {
    if (auto why = internal::CheckObjectName(inst->ns); !why.empty()) {
      reject(inst, "metadata.namespace", why);
      continue;
    }
    if (auto why = internal::CheckObjectName(inst->name); !why.empty()) {
      reject(inst, "metadata.name", why);
      continue;
    }
    if (auto why = internal::CheckSubjectPrefix(inst->subject_prefix); !why.empty()) {
      reject(inst, "spec.nats.subjectPrefix", why);
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
      if (auto why = internal::CheckUsername(user.username); !why.empty()) {
        reject(inst, "spec.nats.credentials.username", why);
        continue;
      }
      // Hashes come from BcryptHash; anything else is a corrupted
      // credentials Secret. Never echo it: it may be a plaintext password.
      if (!IsBcryptHash(user.bcrypt)) {
        reject(inst, "spec.nats.credentials",
               "the stored hash for user \"" + user.username +
                   "\" is not bcrypt; delete the credentials Secret to regenerate it");
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
                   "regenerate it");
        continue;
      }
      auto taken = users_taken.find(user.username);
      if (taken != users_taken.end()) {
        reject(inst, "spec.nats.credentials.username",
               "user name \"" + user.username + "\" is already used by " + taken->second->ns + "/" +
                   taken->second->name + " on this server; choose another username");
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

  std::sort(accepted.begin(), accepted.end(),
            [&](const Accepted& a, const Accepted& b) { return by_key(a.inst, b.inst); });
  std::stable_sort(result.rejected.begin(), result.rejected.end(),
                   [](const Rejected& a, const Rejected& b) {
                     return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
                   });

  std::string& out = result.text;
  // About 250 bytes per user line plus the comment.
  out.reserve(256 + accepted.size() * 320);
  out += "# Generated by switchboard for NatsServer ";
  out += input.server_ns;
  out += '/';
  out += input.server_name;
  out += ". Do not edit.\n# isolation: ";
  out += IsolationName(input.isolation);
  out += "; installations: ";
  out += std::to_string(accepted.size());
  out += "\nmax_payload: ";
  out += std::to_string(input.max_payload);
  out += '\n';

  if (accepted.empty() || input.isolation == Isolation::kPermissions) {
    out += "authorization {\n  users: [\n";
    if (accepted.empty()) {
      out += "    # no installations: a locked placeholder, as an empty list disables auth\n    ";
      out += kPlaceholderUser;
      out += '\n';
    }
    for (const Accepted& a : accepted) {
      out += "    # ";
      out += a.inst->ns;
      out += '/';
      out += a.inst->name;
      out += '\n';
      for (size_t k = a.begin; k < a.end; ++k) {
        out += "    ";
        AppendUser(out, *kept_users[k], a.inst->subject_prefix);
        out += '\n';
      }
    }
    out += "  ]\n}\n";
  } else {
    out += "accounts {\n";
    for (const Accepted& a : accepted) {
      // Account name "<namespace>/<name>": unique, and safe (CheckObjectName).
      out += "  \"";
      out += a.inst->ns;
      out += '/';
      out += a.inst->name;
      out += "\": {\n    users: [\n";
      for (size_t k = a.begin; k < a.end; ++k) {
        out += "      ";
        AppendUser(out, *kept_users[k], a.inst->subject_prefix);
        out += '\n';
      }
      out += "    ]\n  }\n";
    }
    out += "}\n";
  }
  result.installations = static_cast<int>(accepted.size());
  result.hash = ConfigHash(out);
  return result;
}

}  // namespace switchboard::operator_logic
