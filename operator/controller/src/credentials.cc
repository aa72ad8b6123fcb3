#include "credentials.h"

#include "desired.h"
#include "secrets.h"
#include "switchboard/controller/options.h"

namespace switchboard::controller {

Result<Credentials> EnsureCredentials(kube::Client* client, const json& backend,
                                      const BackendSpec& spec) {
  Credentials c;
  auto current = GetSecretOrNull(client, spec.ns, spec.credentials_secret());
  if (!current.ok()) return current.status();
  if (!current->is_null() && !IsOwnedBy(*current, spec.uid)) {
    return Status::FailedPrecondition("Secret " + spec.ns + "/" + spec.credentials_secret() +
                                      " exists and is not owned by PubSubBackend " + spec.key() +
                                      "; delete or rename it");
  }
  SecretData data = current->is_null() ? SecretData{} : DecodeSecretData(*current);
  const SecretData before = data;

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
    c.password = pw->second;
    if (data["bcrypt"].empty() ||
        data["password-check"] != Sha256Tagged(data["bcrypt"] + "\n" + c.password)) {
      auto h = BcryptHash(c.password);
      if (!h.ok()) return h.status();
      data["bcrypt"] = *h;
      data["password-check"] = Sha256Tagged(*h + "\n" + c.password);
    }
    data.erase("password");
  } else {
    if (data["password"].empty()) {
      auto pw = GeneratePassword();
      if (!pw.ok()) return pw.status();
      data["password"] = *pw;
      data["bcrypt"].clear();
    }
    if (data["bcrypt"].empty()) {
      auto h = BcryptHashGenerated(data["password"]);
      if (!h.ok()) return h.status();
      data["bcrypt"] = *h;
    }
    data.erase("password-check");
  }

  int count = 0;
  if (auto it = data.find("rotation-count"); it != data.end() && !it->second.empty()) {
    count = std::atoi(it->second.c_str());
  }
  auto user_for = [&](int n) {
    return n == 0 ? spec.username : spec.username + "-r" + std::to_string(n);
  };

  // Start a rotation: a new password under a new user name; the old user
  // stays rendered (its hash still valid) until it retires.
  const std::string token = Annotation(backend, kRotateAnnotation);
  if (!token.empty() && token != data["rotation-token"] && spec.password_secret.empty()) {
    auto grace = ParseDuration(spec.grace);
    auto g = grace.ok() ? *grace : std::chrono::milliseconds(600000);
    auto pw = GeneratePassword();
    if (!pw.ok()) return pw.status();
    auto h = BcryptHashGenerated(*pw);
    if (!h.ok()) return h.status();
    // A rotation during a rotation retires the oldest user at once.
    data["previous-username"] = user_for(count);
    data["previous-bcrypt"] = data["bcrypt"];
    data["retires-at"] = FormatRfc3339(std::chrono::system_clock::now() +
                                       std::chrono::duration_cast<std::chrono::seconds>(g));
    count++;
    data["rotation-count"] = std::to_string(count);
    data["rotation-token"] = token;
    data["password"] = *pw;
    data["bcrypt"] = *h;
    c.events.emplace_back("RotationStarted", "new credentials under user " + user_for(count) +
                                                 "; user " + data["previous-username"] +
                                                 " stays valid until " + data["retires-at"]);
  } else if (!token.empty() && token != data["rotation-token"]) {
    data["rotation-token"] = token;
    c.events.emplace_back("RotationNotSupported",
                          "the password comes from Secret " + spec.password_secret +
                              ": change it there (the operator re-hashes it)");
  }

  // Retire the old user after the grace period or an acknowledgement.
  if (!data["previous-username"].empty()) {
    std::chrono::system_clock::time_point at{};
    bool parsed = ParseRfc3339(data["retires-at"], &at);
    const std::string ack = Annotation(backend, kRotationAckAnnotation);
    if (!parsed || std::chrono::system_clock::now() >= at ||
        (!ack.empty() && ack == data["rotation-token"])) {
      c.events.emplace_back("RotationCompleted", "user " + data["previous-username"] + " removed");
      data.erase("previous-username");
      data.erase("previous-bcrypt");
      data.erase("retires-at");
    } else {
      c.rotating = true;
      c.retires_at = data["retires-at"];
      c.retires_at_time = at;
    }
  }
  // Clean empty entries the map accessors above created.
  for (auto it = data.begin(); it != data.end();) {
    it = it->second.empty() ? data.erase(it) : std::next(it);
  }

  c.username = user_for(count);
  data["username"] = c.username;
  if (spec.password_secret.empty()) c.password = data["password"];
  const std::string subject = spec.prefix + ".*";
  c.users.push_back({c.username, data["bcrypt"], subject});
  if (c.rotating) c.users.push_back({data["previous-username"], data["previous-bcrypt"], subject});

  if (data != before || current->is_null()) {
    auto w = EnsureOwnedSecret(client, backend, spec.ns, spec.credentials_secret(), data,
                               &current.value());
    if (!w.ok()) return w.status();
  }
  return c;
}

}  // namespace switchboard::controller
