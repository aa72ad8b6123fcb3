#include "switchboard/operator_logic/rotation.h"

#include <charconv>

#include "switchboard/api/values.h"

namespace switchboard::operator_logic {
namespace {

namespace k = state_keys;

const std::string* Find(const SecretData& data, std::string_view key) {
  auto it = data.find(std::string(key));
  return it == data.end() ? nullptr : &it->second;
}

Status Corrupt(std::string_view key, std::string_view why) {
  return Status::InvalidArgument("credentials Secret key \"" + std::string(key) + "\" " +
                                 std::string(why) +
                                 "; delete the credentials Secret to generate new credentials "
                                 "(engines then need the new env Secret)");
}

// Fills env/probe/users/requeue_at from the state.
void Derive(CredentialPlan& plan) {
  const CredentialState& s = plan.state;
  plan.users = RenderedUsers(s);
  plan.probe = s.current;
  plan.env = s.current;
  plan.requeue_at.reset();
  switch (s.phase) {
    case RotationPhase::kNone:
      break;
    case RotationPhase::kStaged:
      // The server may not have loaded the new user yet: engines keep the old
      // credentials until a probe proves the new ones work (ConfirmStaged).
      // Without the old password (adopted credentials) there is nothing else
      // to give them.
      if (s.previous && !s.previous->password.empty()) plan.env = *s.previous;
      break;
    case RotationPhase::kRetiring:
      plan.requeue_at = s.retires_at;
      break;
  }
}

}  // namespace

std::string_view RotationPhaseName(RotationPhase phase) {
  switch (phase) {
    case RotationPhase::kStaged:
      return "Staged";
    case RotationPhase::kRetiring:
      return "Retiring";
    case RotationPhase::kNone:
      break;
  }
  return "";
}

std::string RotatedUsername(std::string_view base, int n) {
  if (n <= 0) return std::string(base);
  return std::string(base) + "-r" + std::to_string(n);
}

SecretData EncodeState(const CredentialState& s) {
  SecretData d;
  d[std::string(k::kUsername)] = s.current.username;
  if (!s.current.password.empty()) d[std::string(k::kPassword)] = s.current.password;
  d[std::string(k::kBcrypt)] = s.current.bcrypt;
  d[std::string(k::kRotationCount)] = std::to_string(s.rotation_count);
  if (!s.rotation_token.empty()) d[std::string(k::kRotationToken)] = s.rotation_token;
  if (s.phase != RotationPhase::kNone && s.previous) {
    d[std::string(k::kRotationPhase)] = std::string(RotationPhaseName(s.phase));
    d[std::string(k::kPreviousUsername)] = s.previous->username;
    if (!s.previous->password.empty()) {
      d[std::string(k::kPreviousPassword)] = s.previous->password;
    }
    d[std::string(k::kPreviousBcrypt)] = s.previous->bcrypt;
    if (s.phase == RotationPhase::kRetiring && s.retires_at) {
      d[std::string(k::kRetiresAt)] = FormatTime(*s.retires_at);
    }
  }
  return d;
}

Result<CredentialState> DecodeState(const SecretData& d) {
  CredentialState s;
  const std::string* username = Find(d, k::kUsername);
  if (username == nullptr || username->empty()) return Corrupt(k::kUsername, "is missing");
  s.current.username = *username;
  if (const std::string* pw = Find(d, k::kPassword)) s.current.password = *pw;
  const std::string* bcrypt = Find(d, k::kBcrypt);
  if (bcrypt == nullptr) return Corrupt(k::kBcrypt, "is missing");
  if (!IsBcryptHash(*bcrypt)) return Corrupt(k::kBcrypt, "is not a bcrypt hash");
  s.current.bcrypt = *bcrypt;
  if (const std::string* count = Find(d, k::kRotationCount)) {
    auto [end, ec] =
        std::from_chars(count->data(), count->data() + count->size(), s.rotation_count);
    if (ec != std::errc() || end != count->data() + count->size() || s.rotation_count < 0) {
      return Corrupt(k::kRotationCount, "is not a non-negative integer");
    }
  }
  if (const std::string* token = Find(d, k::kRotationToken)) s.rotation_token = *token;
  const std::string* phase = Find(d, k::kRotationPhase);
  const std::string* legacy_prev = Find(d, k::kPreviousUsername);
  const bool legacy_retiring =
      (phase == nullptr || phase->empty()) && legacy_prev != nullptr && !legacy_prev->empty();
  if ((phase == nullptr || phase->empty()) && !legacy_retiring) return s;
  if (legacy_retiring) {
    // The older layout (no rotation-phase key): that operator
    // switched the env Secret at once, so the rotation reads as Retiring.
    s.phase = RotationPhase::kRetiring;
  } else if (*phase == "Staged") {
    s.phase = RotationPhase::kStaged;
  } else if (*phase == "Retiring") {
    s.phase = RotationPhase::kRetiring;
  } else {
    return Corrupt(k::kRotationPhase, "is neither Staged nor Retiring");
  }
  Credentials prev;
  const std::string* prev_user = Find(d, k::kPreviousUsername);
  if (prev_user == nullptr || prev_user->empty()) {
    return Corrupt(k::kPreviousUsername, "is missing during a rotation");
  }
  prev.username = *prev_user;
  if (const std::string* pw = Find(d, k::kPreviousPassword)) prev.password = *pw;
  const std::string* prev_hash = Find(d, k::kPreviousBcrypt);
  if (prev_hash == nullptr || !IsBcryptHash(*prev_hash)) {
    return Corrupt(k::kPreviousBcrypt, "is missing or not a bcrypt hash during a rotation");
  }
  prev.bcrypt = *prev_hash;
  s.previous = std::move(prev);
  if (s.phase == RotationPhase::kRetiring) {
    const std::string* at = Find(d, k::kRetiresAt);
    if (at == nullptr && legacy_retiring) {
      // The old layout retired at once when retires-at was absent: due now.
      s.retires_at = Time{};
      return s;
    }
    if (at == nullptr) return Corrupt(k::kRetiresAt, "is missing while Retiring");
    auto t = ParseTime(*at);
    if (!t.ok()) return Corrupt(k::kRetiresAt, "is not an RFC 3339 time");
    s.retires_at = *t;
  }
  return s;
}

Result<CredentialPlan> PlanCredentials(const std::optional<CredentialState>& stored,
                                       const CredentialInputs& in, const CredentialDeps& deps) {
  if (std::string why = api::CheckUsername(in.username); !why.empty()) {
    return Status::InvalidArgument("spec.nats.credentials.username: " + why);
  }
  if (in.external_password && in.external_password->empty()) {
    return Status::InvalidArgument(
        "spec.nats.credentials.passwordSecretRef: the referenced key is empty; put a password "
        "in it");
  }
  auto new_credentials = [&](std::string username) -> Result<Credentials> {
    std::string password;
    if (in.external_password) {
      password = *in.external_password;
    } else {
      auto generated = deps.generate_password();
      if (!generated.ok()) return generated.status();
      password = std::move(generated).value();
    }
    auto hash = deps.hash(password, BcryptCostFor(in.external_password.has_value()));
    if (!hash.ok()) {
      return hash.status().Annotate(in.external_password ? "spec.nats.credentials.passwordSecretRef"
                                                         : "generated password");
    }
    return Credentials{std::move(username), std::move(password), std::move(hash).value()};
  };

  CredentialPlan plan;
  if (!stored) {
    auto creds = new_credentials(in.username);
    if (!creds.ok()) return creds.status();
    plan.state.current = std::move(creds).value();
    // A rotate token already present at creation is satisfied by the fresh
    // password.
    plan.state.rotation_token = in.rotate_token;
    plan.state_changed = true;
    plan.note = "credentials created for user " + plan.state.current.username;
    Derive(plan);
    return plan;
  }

  CredentialState& s = plan.state;
  s = *stored;
  if (s.current.password.empty()) {
    if (!in.external_password) {
      return Status::InvalidArgument(
          "credentials Secret key \"password\" is missing; delete the credentials Secret to "
          "generate new credentials (engines then need the new env Secret)");
    }
    // Adopted credentials without the password copy: the one bcrypt check that
    // tells whether the user's Secret still holds the hashed password.
    auto same = deps.verify(*in.external_password, s.current.bcrypt);
    if (!same.ok()) return same.status();
    if (*same) {
      s.current.password = *in.external_password;
      plan.state_changed = true;
    }
  }

  if (s.phase == RotationPhase::kRetiring) {
    const bool engines_can_move = in.env_username == s.current.username;
    const bool grace_over = s.retires_at && in.now >= *s.retires_at;
    const bool acknowledged = !in.ack_token.empty() && in.ack_token == s.rotation_token;
    if (engines_can_move && (grace_over || acknowledged)) {
      plan.note = (s.previous->username == s.current.username
                       ? "rotation finished: the old password of user " + s.previous->username +
                             " retired ("
                       : "rotation finished: user " + s.previous->username + " removed (") +
                  (acknowledged ? "acknowledged" : "grace period over") + ")";
      s.previous.reset();
      s.phase = RotationPhase::kNone;
      s.retires_at.reset();
      plan.state_changed = true;
    }
  }

  if (s.phase == RotationPhase::kNone) {
    std::string why;
    std::string new_username;
    int new_count = s.rotation_count + 1;
    const bool token_changed = !in.rotate_token.empty() && in.rotate_token != s.rotation_token;
    if (s.current.username != in.username &&
        s.current.username != RotatedUsername(in.username, s.rotation_count)) {
      why = "spec.nats.credentials.username changed";
      new_username = in.username;
      new_count = 0;
    } else if (in.external_password && *in.external_password != s.current.password) {
      why = "the password in spec.nats.credentials.passwordSecretRef changed";
    } else if (token_changed && !in.external_password) {
      why = "rotation requested";
    } else if (token_changed) {
      plan.note =
          "rotate-password ignored: the password comes from spec.nats.credentials."
          "passwordSecretRef; change it there and switchboard stages the change";
    }
    if (!why.empty()) {
      if (new_username.empty()) {
        new_username =
            in.keep_username ? s.current.username : RotatedUsername(in.username, new_count);
      }
      auto creds = new_credentials(new_username);
      if (!creds.ok()) return creds.status();
      s.previous = std::move(s.current);
      s.current = std::move(creds).value();
      s.rotation_count = new_count;
      s.rotation_token = in.rotate_token;
      s.phase = RotationPhase::kStaged;
      plan.state_changed = true;
      plan.note =
          s.current.username == s.previous->username
              ? "rotation staged (" + why + "): a new password for user " + s.current.username +
                    " beside the old one; engines get it once the server accepts it"
              : "rotation staged (" + why + "): new user " + s.current.username + " added beside " +
                    s.previous->username + "; engines get it once the server accepts it";
    }
  }
  Derive(plan);
  return plan;
}

CredentialPlan ConfirmStaged(const CredentialPlan& plan, Time now,
                             std::chrono::milliseconds grace_period) {
  if (plan.state.phase != RotationPhase::kStaged) return plan;
  CredentialPlan out = plan;
  out.state.phase = RotationPhase::kRetiring;
  // Whole seconds, as persisted (FormatTime), so a decoded state equals this one.
  out.state.retires_at = std::chrono::time_point_cast<Clock::duration>(
      std::chrono::ceil<std::chrono::seconds>(now + grace_period));
  out.state_changed = true;
  Derive(out);
  if (out.state.current.username == out.state.previous->username) {
    out.note = "rotation: the server accepts the new password of user " +
               out.state.current.username +
               "; the env Secret now holds it; the old one retires at " +
               FormatTime(*out.state.retires_at);
    return out;
  }
  out.note = "rotation: the server accepts user " + out.state.current.username +
             "; the env Secret now names it; user " + out.state.previous->username +
             " retires at " + FormatTime(*out.state.retires_at);
  return out;
}

std::vector<NatsUser> RenderedUsers(const CredentialState& state) {
  std::vector<NatsUser> users;
  users.push_back({state.current.username, state.current.bcrypt});
  if (state.phase != RotationPhase::kNone && state.previous) {
    users.push_back({state.previous->username, state.previous->bcrypt});
  }
  return users;
}

nlohmann::json RotationStatus(const CredentialState& state) {
  if (state.phase == RotationPhase::kNone) return nullptr;
  nlohmann::json j = {{"phase", std::string(RotationPhaseName(state.phase))}};
  if (state.retires_at) j["retiresAt"] = FormatTime(*state.retires_at);
  return j;
}

}  // namespace switchboard::operator_logic
