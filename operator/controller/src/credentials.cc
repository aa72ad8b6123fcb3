#include "credentials.h"

#include <cstdlib>

#include "desired.h"
#include "secrets.h"
#include "switchboard/controller/options.h"
#include "switchboard/operator/env.h"

namespace switchboard::controller {

namespace {

std::string Get(const SecretData& data, const char* key) {
  auto it = data.find(key);
  return it == data.end() ? std::string() : it->second;
}

int RotationCount(const SecretData& data) {
  std::string n = Get(data, "rotation-count");
  return n.empty() ? 0 : std::atoi(n.c_str());
}

std::string UserFor(const std::string& base, int n) {
  return n == 0 ? base : base + "-r" + std::to_string(n);
}

// "" | Staged | Retiring. previous-username without a phase was written by
// an operator that switched the env Secret at once: Retiring.
std::string PhaseOf(const SecretData& data) {
  if (Get(data, "previous-username").empty()) return "";
  std::string p = Get(data, "rotation-phase");
  return p == kPhaseStaged ? kPhaseStaged : kPhaseRetiring;
}

void DropEmpty(SecretData* data) {
  for (auto it = data->begin(); it != data->end();) {
    it = it->second.empty() ? data->erase(it) : std::next(it);
  }
}

std::chrono::milliseconds Grace(const BackendSpec& spec) {
  auto grace = ParseDuration(spec.grace);
  return grace.ok() ? *grace : std::chrono::milliseconds(600000);
}

}  // namespace

Credentials DescribeCredentials(const SecretData& data, const std::string& base_username,
                                const std::string& subject) {
  Credentials c;
  c.username = UserFor(base_username, RotationCount(data));
  c.password = Get(data, "password");
  c.phase = PhaseOf(data);
  c.rotating = !c.phase.empty();
  c.users.push_back({c.username, Get(data, "bcrypt"), subject});
  c.env_username = c.username;
  c.env_password = c.password;
  if (c.rotating) {
    c.users.push_back({Get(data, "previous-username"), Get(data, "previous-bcrypt"), subject});
  }
  if (c.staged() && !Get(data, "previous-password").empty()) {
    c.env_username = Get(data, "previous-username");
    c.env_password = Get(data, "previous-password");
  }
  if (c.phase == kPhaseRetiring) {
    c.retires_at = Get(data, "retires-at");
    if (!ParseRfc3339(c.retires_at, &c.retires_at_time)) c.retires_at_time = {};
  }
  return c;
}

Result<Credentials> StepCredentials(SecretData* data_ptr, const RotationInputs& in) {
  SecretData& data = *data_ptr;
  std::vector<std::pair<std::string, std::string>> events;

  if (!in.external) {
    if (Get(data, "password").empty()) {
      auto pw = GeneratePassword();
      if (!pw.ok()) return pw.status();
      data["password"] = *pw;
      data.erase("bcrypt");
    }
    if (Get(data, "bcrypt").empty()) {
      auto h = BcryptHashGenerated(data["password"]);
      if (!h.ok()) return h.status();
      data["bcrypt"] = *h;
    }
    data.erase("password-check");
  }
  const int count = RotationCount(data);
  const std::string user = UserFor(in.base_username, count);
  std::string phase = PhaseOf(data);

  // Retire the old user: only once the env Secret names the new one (so no
  // engine restarted from it can be handed a removed user), and after the
  // grace period or an acknowledgement.
  if (phase == kPhaseRetiring) {
    std::chrono::system_clock::time_point at{};
    const bool parsed = ParseRfc3339(Get(data, "retires-at"), &at);
    const bool due = !parsed || in.now >= at ||
                     (!in.ack_token.empty() && in.ack_token == Get(data, "rotation-token"));
    if (due && in.env_username == user) {
      events.emplace_back("RotationCompleted", "user " + data["previous-username"] + " removed");
      for (const char* k : {"previous-username", "previous-bcrypt", "previous-password",
                            "retires-at", "rotation-phase"}) {
        data.erase(k);
      }
      phase.clear();
    }
  }

  // Start a rotation: a new password under a new user name, rendered beside
  // the old user; the env Secret keeps the old credentials until a probe
  // with the new ones passes. A token that changes during a rotation waits
  // for it to finish.
  const std::string& token = in.rotate_token;
  if (!token.empty() && token != Get(data, "rotation-token")) {
    if (in.external) {
      data["rotation-token"] = token;
      events.emplace_back("RotationNotSupported",
                          "the password comes from spec.nats.credentials.passwordSecretRef: "
                          "change it there (the operator re-hashes it)");
    } else if (phase.empty()) {
      auto pw = GeneratePassword();
      if (!pw.ok()) return pw.status();
      auto h = BcryptHashGenerated(*pw);
      if (!h.ok()) return h.status();
      data["previous-username"] = user;
      data["previous-bcrypt"] = data["bcrypt"];
      data["previous-password"] = data["password"];
      data["rotation-phase"] = kPhaseStaged;
      data.erase("retires-at");
      data["rotation-count"] = std::to_string(count + 1);
      data["rotation-token"] = token;
      data["password"] = *pw;
      data["bcrypt"] = *h;
      events.emplace_back("RotationStaged",
                          "new credentials under user " + UserFor(in.base_username, count + 1) +
                              " rendered beside user " + user + "; the env Secret keeps " + user +
                              " until the server accepts the new user");
    }
  }
  DropEmpty(&data);
  data["username"] = UserFor(in.base_username, RotationCount(data));

  Credentials c = DescribeCredentials(data, in.base_username, in.subject);
  c.events = std::move(events);
  return c;
}

Credentials ConfirmStagedData(SecretData* data, const std::string& base_username,
                              const std::string& subject, std::chrono::system_clock::time_point now,
                              std::chrono::milliseconds grace) {
  if (PhaseOf(*data) == kPhaseStaged) {
    (*data)["rotation-phase"] = kPhaseRetiring;
    (*data)["retires-at"] =
        FormatRfc3339(now + std::chrono::duration_cast<std::chrono::seconds>(grace));
    data->erase("previous-password");
  }
  return DescribeCredentials(*data, base_username, subject);
}

Result<Credentials> EnsureCredentials(kube::Client* client, const json& backend,
                                      const BackendSpec& spec) {
  auto current = GetSecretOrNull(client, spec.ns, spec.credentials_secret());
  if (!current.ok()) return current.status();
  if (!current->is_null() && !IsOwnedBy(*current, spec.uid)) {
    return Status::FailedPrecondition("Secret " + spec.ns + "/" + spec.credentials_secret() +
                                      " exists and is not owned by PubSubBackend " + spec.key() +
                                      "; delete or rename it");
  }
  SecretData data = current->is_null() ? SecretData{} : DecodeSecretData(*current);
  const SecretData before = data;

  std::string external_password;
  if (!spec.password_secret.empty()) {
    // The user's Secret holds the password; we keep only its hash.
    auto ref = GetSecretOrNull(client, spec.ns, spec.password_secret);
    if (!ref.ok()) return ref.status();
    if (ref->is_null()) {
      return Status::NotFound("Secret " + spec.ns + "/" + spec.password_secret +
                              " (spec.nats.credentials.passwordSecretRef) does not exist; create "
                              "it with the password under key \"" +
                              spec.password_key + "\"");
    }
    SecretData ref_data = DecodeSecretData(*ref);
    auto pw = ref_data.find(spec.password_key);
    if (pw == ref_data.end() || pw->second.empty()) {
      return Status::NotFound("Secret " + spec.ns + "/" + spec.password_secret + " has no key \"" +
                              spec.password_key +
                              "\" (spec.nats.credentials.passwordSecretRef.key); add it");
    }
    external_password = pw->second;
    if (Get(data, "bcrypt").empty() ||
        Get(data, "password-check") != Sha256Tagged(data["bcrypt"] + "\n" + external_password)) {
      auto h = BcryptHash(external_password);
      if (!h.ok()) return h.status();
      data["bcrypt"] = *h;
      data["password-check"] = Sha256Tagged(*h + "\n" + external_password);
    }
    data.erase("password");
  }

  RotationInputs in;
  in.base_username = spec.username;
  in.subject = spec.prefix + ".*";
  in.external = !spec.password_secret.empty();
  in.rotate_token = Annotation(backend, kRotateAnnotation);
  in.ack_token = Annotation(backend, kRotationAckAnnotation);
  in.grace = Grace(spec);
  in.now = std::chrono::system_clock::now();
  if (PhaseOf(data) == kPhaseRetiring) {
    // Retirement waits until the env Secret is seen to hold the new user.
    auto env = GetSecretOrNull(client, spec.ns, spec.env_secret);
    if (!env.ok()) return env.status();
    if (!env->is_null()) {
      in.env_username =
          Get(DecodeSecretData(*env), std::string(operator_logic::kEnvNatsUsername).c_str());
    }
  }
  auto c = StepCredentials(&data, in);
  if (!c.ok()) return c.status();
  if (in.external) {
    c->password = external_password;
    c->env_password = external_password;
  }

  if (data != before || current->is_null()) {
    auto w = EnsureOwnedSecret(client, backend, spec.ns, spec.credentials_secret(), data,
                               &current.value());
    if (!w.ok()) return w.status();
  }
  return c;
}

Result<Credentials> ConfirmStaged(kube::Client* client, const json& backend,
                                  const BackendSpec& spec, const Credentials& creds) {
  if (!creds.staged()) return creds;
  auto current = GetSecretOrNull(client, spec.ns, spec.credentials_secret());
  if (!current.ok()) return current.status();
  if (current->is_null() || !IsOwnedBy(*current, spec.uid)) {
    return Status::Unavailable("Secret " + spec.ns + "/" + spec.credentials_secret() +
                               " changed during the reconcile; retrying");
  }
  SecretData data = DecodeSecretData(*current);
  Credentials c = ConfirmStagedData(&data, spec.username, spec.prefix + ".*",
                                    std::chrono::system_clock::now(), Grace(spec));
  // Another reconcile (or a concurrent change) moved the state: start over.
  if (c.username != creds.username) {
    return Status::Unavailable("credentials of " + spec.key() + " changed; retrying");
  }
  auto w = EnsureOwnedSecret(client, backend, spec.ns, spec.credentials_secret(), data,
                             &current.value());
  if (!w.ok()) return w.status();
  if (!spec.password_secret.empty()) {
    c.password = creds.password;
    c.env_password = creds.password;
  }
  c.events.emplace_back("RotationSwitched", "the server accepts user " + c.username +
                                                "; the env Secret now names it; user " +
                                                c.users.back().username + " stays valid until " +
                                                c.retires_at);
  return c;
}

}  // namespace switchboard::controller
