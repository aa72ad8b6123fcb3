#include "switchboard/operator_logic/callout.h"

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <memory>
#include <tuple>

#include "acceptance.h"
#include "nats_conf.h"
#include "selection.h"
#include "switchboard/api/names.h"
#include "switchboard/api/quantity.h"
#include "switchboard/api/values.h"
#include "switchboard/api/views.h"
#include "switchboard/natsauth/nkey.h"

namespace switchboard::operator_logic {
namespace {

namespace k = callout_keys;
using natsauth::KeyType;

const std::string* Find(const SecretData& data, std::string_view key) {
  auto it = data.find(std::string(key));
  return it == data.end() ? nullptr : &it->second;
}

Status BadKey(std::string_view key, std::string_view why) {
  return Status::InvalidArgument("callout Secret key \"" + std::string(key) + "\" " +
                                 std::string(why));
}

// The public key of an account seed; never echoes the seed.
Result<std::string> IssuerOf(std::string_view seed) {
  auto pair = natsauth::KeyPair::FromSeed(seed);
  if (!pair.ok() || pair->type() != KeyType::kAccount) {
    return BadKey(k::kIssuerSeed, "is not an account seed (SA...)");
  }
  return pair->public_key();
}

Result<Credentials> DecodeUser(const SecretData& data, std::string_view username,
                               std::string_view password_key, std::string_view bcrypt_key) {
  const std::string* password = Find(data, password_key);
  if (password == nullptr || password->empty()) return BadKey(password_key, "is missing");
  const std::string* bcrypt = Find(data, bcrypt_key);
  if (bcrypt == nullptr || bcrypt->empty()) return BadKey(bcrypt_key, "is missing");
  if (!IsBcryptHash(*bcrypt)) return BadKey(bcrypt_key, "is not a bcrypt hash");
  return Credentials{std::string(username), *password, *bcrypt};
}

// Keeps a stored user whose password and hash are both there (a hash is
// trusted as DecodeState trusts it: verifying costs a bcrypt per
// reconcile); hashes a password without a usable hash; otherwise a new
// password.
Status PlanUser(const std::optional<SecretData>& stored, std::string_view username,
                std::string_view password_key, std::string_view bcrypt_key,
                const CredentialDeps& deps, Credentials& out, bool& changed,
                std::vector<std::string>& notes) {
  out.username = std::string(username);
  const std::string* password = stored ? Find(*stored, password_key) : nullptr;
  const std::string* bcrypt = stored ? Find(*stored, bcrypt_key) : nullptr;
  if (password != nullptr && !password->empty()) {
    out.password = *password;
    if (bcrypt != nullptr && IsBcryptHash(*bcrypt)) {
      out.bcrypt = *bcrypt;
      return Status::Ok();
    }
    notes.push_back("hashed the password of " + std::string(username));
  } else {
    auto generated = deps.generate_password();
    if (!generated.ok()) return generated.status();
    out.password = std::move(generated).value();
    notes.push_back("generated a password for " + std::string(username));
  }
  auto hash = deps.hash(out.password, BcryptCostFor(false));
  if (!hash.ok()) return hash.status();
  out.bcrypt = std::move(hash).value();
  changed = true;
  return Status::Ok();
}

void AppendAccountUser(std::string& out, std::string_view account, std::string_view user,
                       std::string_view bcrypt) {
  out += "  ";
  internal::AppendQuoted(out, account);
  out += ": {users: [{user: ";
  internal::AppendQuoted(out, user);
  out += ", password: ";
  internal::AppendQuoted(out, bcrypt);
  out += "}]}\n";
}

using Digest = std::array<unsigned char, 32>;

Digest Sha256(std::string_view bytes) {
  Digest d{};
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), d.data(), &len, EVP_sha256(), nullptr);
  return d;
}

// "<username>#<generation>" split at the last '#' (user names never hold
// one: the render's and the rules' alphabet has none).
bool ParseConnectionName(std::string_view name, std::string_view& user, int& generation) {
  const size_t hash = name.rfind('#');
  if (hash == std::string_view::npos || hash == 0 || hash + 1 == name.size()) return false;
  const std::string_view digits = name.substr(hash + 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), generation);
  if (ec != std::errc() || end != digits.data() + digits.size() || generation < 0) return false;
  user = name.substr(0, hash);
  return true;
}

bool Accepted(const AcceptedPassword& p, Time now) { return !p.until || now < *p.until; }

}  // namespace

SecretData EncodeCalloutKeys(const CalloutKeys& keys) {
  SecretData d;
  d[std::string(k::kIssuerSeed)] = keys.issuer_seed;
  d[std::string(k::kIssuer)] = keys.issuer;
  d[std::string(k::kAuthorizerPassword)] = keys.authorizer.password;
  d[std::string(k::kAuthorizerBcrypt)] = keys.authorizer.bcrypt;
  d[std::string(k::kSystemPassword)] = keys.system.password;
  d[std::string(k::kSystemBcrypt)] = keys.system.bcrypt;
  if (!keys.ca.empty()) d[std::string(k::kCa)] = keys.ca;
  return d;
}

std::string CheckCaBundle(std::string_view pem) {
  constexpr std::string_view kBegin = "-----BEGIN CERTIFICATE-----";
  constexpr std::string_view kEnd = "-----END CERTIFICATE-----";
  // Only certificate blocks and whitespace: a private key pasted in by
  // mistake is refused rather than copied into another Secret.
  int blocks = 0;
  size_t at = 0;
  while (true) {
    const size_t text = pem.find_first_not_of(" \t\r\n", at);
    if (text == std::string_view::npos) break;
    if (pem.substr(text, kBegin.size()) != kBegin) {
      return "holds something other than PEM certificates (-----BEGIN CERTIFICATE----- blocks)";
    }
    const size_t end = pem.find(kEnd, text);
    if (end == std::string_view::npos) return "has a certificate block without its END line";
    at = end + kEnd.size();
    ++blocks;
  }
  if (blocks == 0) return "holds no PEM certificate";
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  if (!bio) return "cannot be read";
  int parsed = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    X509_free(cert);
    ++parsed;
  }
  // The end of the text leaves "no start line" on this thread's queue; a
  // later OpenSSL call of the thread must not read it as its own error.
  ERR_clear_error();
  if (parsed != blocks) return "has a certificate block that does not parse";
  return "";
}

CalloutCaDecision DecideCalloutCa(std::string_view server_ns,
                                  const std::optional<api::SecretKeyRef>& ref,
                                  const std::optional<std::string>& found) {
  CalloutCaDecision d;
  if (!ref) {
    d.ca = std::string();
    return d;
  }
  const std::string where = "CA Secret " + std::string(server_ns) + "/" + ref->name + " key \"" +
                            ref->key + "\" (NatsServer spec.tls.caSecretRef)";
  if (!found || found->empty()) {
    d.problem = where +
                " not found; create it with the PEM CA bundle that signed the NATS servers' "
                "certificates, or remove spec.tls.caSecretRef";
    return d;
  }
  if (auto why = CheckCaBundle(*found); !why.empty()) {
    d.problem = where + " " + why + "; put the PEM CA bundle that signed the NATS servers' " +
                "certificates there";
    return d;
  }
  d.ca = *found;
  return d;
}

Result<CalloutKeys> DecodeCalloutKeys(const SecretData& data) {
  CalloutKeys keys;
  const std::string* seed = Find(data, k::kIssuerSeed);
  if (seed == nullptr || seed->empty()) return BadKey(k::kIssuerSeed, "is missing");
  auto issuer = IssuerOf(*seed);
  if (!issuer.ok()) return issuer.status();
  const std::string* stored_issuer = Find(data, k::kIssuer);
  if (stored_issuer == nullptr || stored_issuer->empty()) return BadKey(k::kIssuer, "is missing");
  if (!natsauth::IsPublicKey(*stored_issuer, KeyType::kAccount)) {
    return BadKey(k::kIssuer, "is not an account public key (A...)");
  }
  if (*stored_issuer != *issuer) {
    return BadKey(k::kIssuer, "is not the public key of \"" + std::string(k::kIssuerSeed) + "\"");
  }
  keys.issuer_seed = *seed;
  keys.issuer = *issuer;
  auto authorizer =
      DecodeUser(data, api::kAuthorizerUsername, k::kAuthorizerPassword, k::kAuthorizerBcrypt);
  if (!authorizer.ok()) return authorizer.status();
  keys.authorizer = std::move(authorizer).value();
  auto system = DecodeUser(data, api::kCalloutSystemUsername, k::kSystemPassword, k::kSystemBcrypt);
  if (!system.ok()) return system.status();
  keys.system = std::move(system).value();
  if (const std::string* ca = Find(data, k::kCa); ca != nullptr && !ca->empty()) {
    if (auto why = CheckCaBundle(*ca); !why.empty()) return BadKey(k::kCa, why);
    keys.ca = *ca;
  }
  return keys;
}

Result<CalloutKeysPlan> PlanCalloutKeys(const std::optional<SecretData>& stored,
                                        const CredentialDeps& deps,
                                        const std::optional<std::string>& ca) {
  CalloutKeysPlan plan;
  std::vector<std::string> notes;
  const std::string* seed = stored ? Find(*stored, k::kIssuerSeed) : nullptr;
  if (seed != nullptr && !seed->empty()) {
    // A stored seed is never replaced: the servers run with its public key
    // and auth_callout is not reloadable.
    auto issuer = IssuerOf(*seed);
    if (!issuer.ok()) {
      return Status::InvalidArgument(
          issuer.status().message() +
          "; the NATS servers trust only the issuer they started with: restore the seed, or "
          "delete the callout Secret and restart every NATS server with the new config");
    }
    plan.keys.issuer_seed = *seed;
    plan.keys.issuer = std::move(issuer).value();
    const std::string* stored_issuer = Find(*stored, k::kIssuer);
    if (stored_issuer == nullptr || *stored_issuer != plan.keys.issuer) {
      plan.changed = true;
      notes.push_back("restored the issuer public key from its seed");
    }
  } else {
    auto pair = natsauth::KeyPair::Generate(KeyType::kAccount);
    if (!pair.ok()) return pair.status();
    plan.keys.issuer_seed = pair->Seed();
    plan.keys.issuer = pair->public_key();
    plan.changed = true;
    const std::string* stored_issuer = stored ? Find(*stored, k::kIssuer) : nullptr;
    notes.push_back("generated issuer " + plan.keys.issuer +
                    (stored_issuer != nullptr && !stored_issuer->empty()
                         ? " (the stored issuer " + *stored_issuer +
                               " had no seed: every NATS server of this NatsServer needs a "
                               "restart with the new config)"
                         : ""));
  }
  if (auto s = PlanUser(stored, api::kAuthorizerUsername, k::kAuthorizerPassword,
                        k::kAuthorizerBcrypt, deps, plan.keys.authorizer, plan.changed, notes);
      !s.ok()) {
    return s;
  }
  if (auto s = PlanUser(stored, api::kCalloutSystemUsername, k::kSystemPassword, k::kSystemBcrypt,
                        deps, plan.keys.system, plan.changed, notes);
      !s.ok()) {
    return s;
  }
  const std::string* stored_ca = stored ? Find(*stored, k::kCa) : nullptr;
  if (ca) {
    plan.keys.ca = *ca;
  } else if (stored_ca != nullptr && CheckCaBundle(*stored_ca).empty()) {
    plan.keys.ca = *stored_ca;
  }
  const std::string was = stored_ca != nullptr ? *stored_ca : std::string();
  if (plan.keys.ca != was) {
    notes.push_back(plan.keys.ca.empty() ? "no CA from spec.tls.caSecretRef any more"
                    : was.empty()        ? "copied the CA of spec.tls.caSecretRef"
                                         : "copied the changed CA of spec.tls.caSecretRef");
  }
  // Keys this code does not write are dropped by the rewrite; say so.
  if (stored && !plan.changed && EncodeCalloutKeys(plan.keys) != *stored) plan.changed = true;
  for (size_t i = 0; i < notes.size(); ++i) {
    if (i > 0) plan.note += "; ";
    plan.note += notes[i];
  }
  return plan;
}

Result<std::string> RenderCalloutConfig(const CalloutConfigInput& in) {
  if (Status s = internal::CheckServerValues(in.server_ns, in.server_name, in.max_payload);
      !s.ok()) {
    return s;
  }
  if (auto why = api::CheckCalloutAccount(in.account); !why.empty()) {
    return Status::InvalidArgument("spec.provisioning.authCallout.account: " + why);
  }
  if (!natsauth::IsPublicKey(in.issuer, KeyType::kAccount)) {
    return Status::InvalidArgument(
        "auth_callout issuer: not an account public key (A...); check the callout Secret's \"" +
        std::string(k::kIssuer) + "\"");
  }
  if (!IsBcryptHash(in.authorizer_bcrypt)) {
    return Status::InvalidArgument("the callout Secret's \"" + std::string(k::kAuthorizerBcrypt) +
                                   "\" is not a bcrypt hash");
  }
  if (!IsBcryptHash(in.system_bcrypt)) {
    return Status::InvalidArgument("the callout Secret's \"" + std::string(k::kSystemBcrypt) +
                                   "\" is not a bcrypt hash");
  }
  if (in.timeout_seconds < 1 || in.timeout_seconds > 60) {
    return Status::InvalidArgument("authorization timeout: " + std::to_string(in.timeout_seconds) +
                                   " s is outside 1..60");
  }

  std::string out;
  out.reserve(1024);
  out += "# Generated by switchboard for NatsServer ";
  out += in.server_ns;
  out += '/';
  out += in.server_name;
  out += ". Do not edit.\n# provisioning: AuthCallout; users of account ";
  out += in.account;
  out += " are authorized by ";
  out += api::kAuthorizerUsername;
  out += "\nmax_payload: ";
  out += std::to_string(in.max_payload);
  out += "\naccounts {\n";
  AppendAccountUser(out, api::kCalloutAuthAccount, api::kAuthorizerUsername, in.authorizer_bcrypt);
  out += "  ";
  internal::AppendQuoted(out, in.account);
  out += ": {}\n";
  AppendAccountUser(out, api::kCalloutSystemAccount, api::kCalloutSystemUsername, in.system_bcrypt);
  out += "}\nsystem_account: ";
  internal::AppendQuoted(out, api::kCalloutSystemAccount);
  out += "\nauthorization {\n  timeout: ";
  out += std::to_string(in.timeout_seconds);
  out += "\n  auth_callout {\n    issuer: ";
  internal::AppendQuoted(out, in.issuer);
  out += "\n    account: ";
  internal::AppendQuoted(out, api::kCalloutAuthAccount);
  out += "\n    auth_users: [";
  internal::AppendQuoted(out, api::kAuthorizerUsername);
  out += "]\n    allowed_accounts: [";
  internal::AppendQuoted(out, in.account);
  out += "]\n  }\n}\n";
  return out;
}

DirectoryEntry::DirectoryEntry(std::shared_ptr<const InstallationRecord> installation,
                               std::string_view username)
    : installation_(std::move(installation)) {
  const CredentialState* state = installation_->credentials.get();
  if (state == nullptr) return;
  if (state->current.username == username) {
    username_ = state->current.username;
  } else if (state->previous && state->previous->username == username) {
    username_ = state->previous->username;
  }
}

AcceptedPasswords DirectoryEntry::passwords() const {
  AcceptedPasswords out;
  const CredentialState* state = installation_->credentials.get();
  if (state == nullptr || username_.empty()) return out;
  if (state->current.username == username_) {
    out.push_back(
        {state->current.password, state->current.bcrypt, state->rotation_count, std::nullopt});
  }
  if (state->phase != RotationPhase::kNone && state->previous &&
      state->previous->username == username_) {
    std::optional<Time> until;
    if (state->phase == RotationPhase::kRetiring) until = state->retires_at;
    out.push_back({state->previous->password, state->previous->bcrypt,
                   std::max(0, state->rotation_count - 1), until});
  }
  return out;
}

bool Directory::Add(DirectoryEntry entry) {
  const std::string_view key = entry.username();
  return by_user.emplace(key, std::move(entry)).second;
}

Result<Directory> CollectDirectory(const nlohmann::json& server,
                                   const std::vector<const nlohmann::json*>& backends,
                                   const SecretLookup& secret) {
  // One allocation holds every record; each entry keeps it alive.
  auto held = std::make_shared<const std::vector<InstallationRecord>>(
      internal::RecordsBoundTo(api::NatsServerView(server), backends, secret));
  std::vector<std::shared_ptr<const InstallationRecord>> records;
  records.reserve(held->size());
  for (const InstallationRecord& r : *held) records.emplace_back(held, &r);
  return CollectDirectory(server, records);
}

Result<Directory> CollectDirectory(
    const nlohmann::json& server,
    const std::vector<std::shared_ptr<const InstallationRecord>>& records) {
  api::NatsServerView sv(server);
  Directory dir;
  dir.server_ns = sv.ns();
  dir.server_name = sv.name();
  dir.account = sv.callout_account();
  if (auto why = api::CheckCalloutAccount(dir.account); !why.empty()) {
    return Status::InvalidArgument("spec.provisioning.authCallout.account: " + why);
  }
  std::vector<const InstallationRecord*> pointers;
  pointers.reserve(records.size());
  for (const auto& r : records) pointers.push_back(r.get());
  std::vector<internal::SelectedBackend> selected =
      internal::SelectBackends(sv, pointers, dir.skipped);
  // The render's acceptance decides the values and the claims. A user name
  // appears once per installation (a rotation that keeps its name has two
  // passwords for it); the first is the current user's.
  std::vector<Installation> installations;
  installations.reserve(selected.size());
  for (const internal::SelectedBackend& b : selected) {
    Installation inst;
    inst.ns = b.record->ns;
    inst.name = b.record->name;
    inst.subject_prefix = b.record->subject_prefix;
    inst.created = b.record->created;
    for (NatsUser& u : RenderedUsers(*b.record->credentials)) {
      const bool seen = std::any_of(inst.users.begin(), inst.users.end(),
                                    [&](const NatsUser& x) { return x.username == u.username; });
      if (!seen) inst.users.push_back(std::move(u));
    }
    installations.push_back(std::move(inst));
  }
  internal::Acceptance acceptance = internal::AcceptInstallations(installations);
  for (const Rejected& r : acceptance.rejected) dir.skipped.push_back(r.ToString());
  for (const internal::AcceptedInstallation& a : acceptance.accepted) {
    const auto& record =
        records[selected[static_cast<size_t>(a.inst - installations.data())].index];
    for (size_t i = a.begin; i < a.end; ++i) {
      dir.Add(DirectoryEntry(record, acceptance.kept_users[i]->username));
    }
  }
  return dir;
}

std::string_view DenialReason(Denial denial) {
  switch (denial) {
    case Denial::kUnknownUser:
      return "UnknownUser";
    case Denial::kWrongPassword:
      return "WrongPassword";
    case Denial::kPasswordRetired:
      return "PasswordRetired";
    case Denial::kNoCredentials:
      return "NoCredentials";
    case Denial::kNone:
      break;
  }
  return "Allowed";
}

AuthorizationDecision DecideAuthorization(const Directory& directory, std::string_view user,
                                          std::string_view password, Time now,
                                          const CredentialDeps& deps) {
  AuthorizationDecision d;
  const std::string server = directory.server_ns + "/" + directory.server_name;
  auto deny = [&](Denial denial, std::string message) {
    d.denial = denial;
    d.message = std::move(message);
    return d;
  };
  if (user.empty() || password.empty()) {
    return deny(Denial::kNoCredentials, "no user name and password given; NatsServer " + server +
                                            " accepts only installations' credentials");
  }
  // Names the user as the client sent it, printable and bounded, so a log
  // line cannot be forged with it.
  std::string who;
  for (char c : user.substr(0, 128)) {
    const unsigned char u = static_cast<unsigned char>(c);
    who.push_back(u < 0x20 || u >= 0x7f || c == '"' || c == '\\' ? '?' : c);
  }
  auto it = directory.by_user.find(user);
  if (it == directory.by_user.end()) {
    return deny(Denial::kUnknownUser, "user \"" + who + "\" is no installation's on NatsServer " +
                                          server + " (unknown, deleted or not Ready)");
  }
  const DirectoryEntry& entry = it->second;
  const Digest given = Sha256(password);
  const AcceptedPasswords accepted = entry.passwords();
  const AcceptedPassword* match = nullptr;
  // Every plaintext is compared, so the time taken does not say which one
  // (or whether any) matched.
  for (const AcceptedPassword& p : accepted) {
    if (p.password.empty()) continue;
    const Digest stored = Sha256(p.password);
    if (CRYPTO_memcmp(given.data(), stored.data(), given.size()) == 0 && match == nullptr) {
      match = &p;
    }
  }
  if (match == nullptr) {
    for (const AcceptedPassword& p : accepted) {
      if (!p.password.empty() || p.bcrypt.empty()) continue;
      auto ok = deps.verify(password, p.bcrypt);
      if (ok.ok() && *ok) {
        match = &p;
        break;
      }
    }
  }
  if (match == nullptr) {
    return deny(Denial::kWrongPassword,
                "user \"" + who + "\" (" + entry.ns() + "/" + entry.name() + "): wrong password");
  }
  if (!Accepted(*match, now)) {
    return deny(Denial::kPasswordRetired,
                "user \"" + who + "\" (" + entry.ns() + "/" + entry.name() +
                    "): the password of rotation " + std::to_string(match->generation) +
                    " was retired at " + FormatTime(*match->until) +
                    "; use the credentials in the installation's env Secret");
  }
  d.ns = entry.ns();
  d.name = entry.name();
  d.username = std::string(entry.username());
  d.account = directory.account;
  d.connection_name = CalloutConnectionName(entry.username(), match->generation);
  d.allow = SubjectAllowList(entry.subject_prefix());
  d.message = "user \"" + std::string(entry.username()) + "\" (" + entry.ns() + "/" + entry.name() +
              ") allowed into account " + directory.account + " on " +
              api::AllowedSubject(entry.subject_prefix());
  return d;
}

std::vector<std::string> SubjectAllowList(std::string_view prefix) {
  return {api::AllowedSubject(prefix)};
}

std::string CalloutConnectionName(std::string_view username, int generation) {
  return std::string(username) + "#" + std::to_string(generation);
}

namespace {

// Whether `name` is a currently accepted (username, generation) of a user
// (of `only_user` when it is not empty).
bool StillAccepted(const Directory& directory, std::string_view name, std::string_view only_user,
                   Time now) {
  std::string_view user;
  int generation = 0;
  if (!ParseConnectionName(name, user, generation)) return false;
  if (!only_user.empty() && user != only_user) return false;
  auto it = directory.by_user.find(user);
  if (it == directory.by_user.end()) return false;
  for (const AcceptedPassword& p : it->second.passwords()) {
    if (p.generation == generation && Accepted(p, now)) return true;
  }
  return false;
}

void SortByServerAndCid(std::vector<LiveConnection>& out) {
  std::sort(out.begin(), out.end(), [](const LiveConnection& a, const LiveConnection& b) {
    return std::tie(a.server_id, a.cid) < std::tie(b.server_id, b.cid);
  });
}

}  // namespace

std::vector<LiveConnection> ConnectionsToClose(const Directory& directory,
                                               const std::vector<LiveConnection>& live, Time now) {
  std::vector<LiveConnection> out;
  for (const LiveConnection& c : live) {
    if (c.account != directory.account) continue;
    if (!StillAccepted(directory, c.name, "", now)) out.push_back(c);
  }
  SortByServerAndCid(out);
  return out;
}

std::vector<LiveConnection> ConnectionsToCloseByAccount(
    const Directory& directory, const std::map<std::string, std::string>& accounts,
    const std::vector<LiveConnection>& live, Time now) {
  std::vector<LiveConnection> out;
  for (const LiveConnection& c : live) {
    auto owner = accounts.find(c.account);
    if (owner == accounts.end()) continue;
    if (!StillAccepted(directory, c.name, owner->second, now)) out.push_back(c);
  }
  SortByServerAndCid(out);
  return out;
}

}  // namespace switchboard::operator_logic
