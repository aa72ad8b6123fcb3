#include "switchboard/operator_logic/operator_mode_keys.h"

#include <charconv>
#include <vector>

#include "switchboard/natsauth/derive.h"
#include "switchboard/natsauth/jwt.h"
#include "switchboard/natsauth/operator_jwt.h"

namespace switchboard::operator_logic {
namespace {

namespace k = operator_mode_keys;
using natsauth::KeyPair;
using natsauth::KeyType;

Status BadKey(std::string_view key, std::string_view why) {
  return Status::InvalidArgument("callout Secret key \"" + std::string(key) + "\" " +
                                 std::string(why));
}

const std::string* Find(const SecretData& data, std::string_view key) {
  auto it = data.find(std::string(key));
  return it == data.end() || it->second.empty() ? nullptr : &it->second;
}

std::string_view Letters(KeyType type) {
  switch (type) {
    case KeyType::kOperator:
      return "an operator seed (SO...)";
    case KeyType::kAccount:
      return "an account seed (SA...)";
    default:
      return "a user seed (SU...)";
  }
}

Result<KeyPair> SeedOf(std::string_view key, std::string_view seed, KeyType type) {
  auto pair = KeyPair::FromSeed(seed);
  if (!pair.ok() || pair->type() != type)
    return BadKey(key, "is not " + std::string(Letters(type)));
  return pair;
}

struct SeedSlot {
  std::string_view key;
  KeyType type;
  std::string OperatorModeSeeds::*field;
};
constexpr SeedSlot kSlots[] = {
    {k::kOperatorSeed, KeyType::kOperator, &OperatorModeSeeds::operator_seed},
    {k::kSystemAccountSeed, KeyType::kAccount, &OperatorModeSeeds::system_account_seed},
    {k::kSystemUserSeed, KeyType::kUser, &OperatorModeSeeds::system_user_seed},
    {k::kAuthorizerUserSeed, KeyType::kUser, &OperatorModeSeeds::authorizer_user_seed},
    {k::kInstallationSigningSeed, KeyType::kAccount, &OperatorModeSeeds::installation_signing_seed},
};

Result<int64_t> ParseIssuedAt(const std::string& text) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v <= 0) {
    return BadKey(k::kIssuedAt, "is not a positive count of seconds");
  }
  return v;
}

Result<std::string> UserJwt(const KeyPair& account, const KeyPair& user, std::string_view name,
                            int64_t now) {
  natsauth::UserClaims u;
  u.claims = {.issued_at = now, .name = std::string(name), .subject = user.public_key()};
  return natsauth::EncodeUserClaims(u, account);
}

}  // namespace

SecretData EncodeOperatorModeSeeds(const OperatorModeSeeds& seeds) {
  SecretData out;
  for (const auto& slot : kSlots) out[std::string(slot.key)] = seeds.*slot.field;
  out[std::string(k::kSentinelUser)] = seeds.sentinel_user;
  out[std::string(k::kIssuedAt)] = std::to_string(seeds.issued_at);
  return out;
}

Result<OperatorModeSeedsPlan> PlanOperatorModeSeeds(const std::optional<SecretData>& stored,
                                                    int64_t now) {
  OperatorModeSeedsPlan plan;
  std::vector<std::string> generated;
  for (const auto& slot : kSlots) {
    const std::string* seed = stored ? Find(*stored, slot.key) : nullptr;
    if (seed != nullptr) {
      auto pair = SeedOf(slot.key, *seed, slot.type);
      if (!pair.ok()) {
        return Status::InvalidArgument(
            pair.status().message() +
            "; the NATS servers and every installation account depend on it: restore it, or "
            "delete the callout Secret and restart every NATS server with the new config");
      }
      plan.seeds.*slot.field = *seed;
      continue;
    }
    auto pair = KeyPair::Generate(slot.type);
    if (!pair.ok()) return pair.status();
    plan.seeds.*slot.field = pair->Seed();
    generated.emplace_back(slot.key);
  }
  const std::string* sentinel = stored ? Find(*stored, k::kSentinelUser) : nullptr;
  if (sentinel != nullptr && natsauth::IsPublicKey(*sentinel, KeyType::kUser)) {
    plan.seeds.sentinel_user = *sentinel;
  } else {
    // Nobody needs its seed: a bearer token is never asked to sign a nonce.
    auto pair = KeyPair::Generate(KeyType::kUser);
    if (!pair.ok()) return pair.status();
    plan.seeds.sentinel_user = pair->public_key();
    generated.emplace_back(k::kSentinelUser);
  }
  const std::string* at = stored ? Find(*stored, k::kIssuedAt) : nullptr;
  auto parsed = at ? ParseIssuedAt(*at) : Result<int64_t>(Status::NotFound(""));
  if (parsed.ok()) {
    plan.seeds.issued_at = *parsed;
  } else {
    plan.seeds.issued_at = now;
    generated.emplace_back(k::kIssuedAt);
  }
  plan.changed = !generated.empty();
  for (const auto& g : generated) plan.note += (plan.note.empty() ? "generated " : ", ") + g;
  return plan;
}

Result<OperatorModeSeeds> DecodeOperatorModeSeeds(const SecretData& data) {
  OperatorModeSeeds seeds;
  for (const auto& slot : kSlots) {
    const std::string* seed = Find(data, slot.key);
    if (seed == nullptr) return BadKey(slot.key, "is missing");
    if (auto pair = SeedOf(slot.key, *seed, slot.type); !pair.ok()) return pair.status();
    seeds.*slot.field = *seed;
  }
  const std::string* sentinel = Find(data, k::kSentinelUser);
  if (sentinel == nullptr || !natsauth::IsPublicKey(*sentinel, KeyType::kUser)) {
    return BadKey(k::kSentinelUser, "is not a user public key (U...)");
  }
  seeds.sentinel_user = *sentinel;
  const std::string* at = Find(data, k::kIssuedAt);
  if (at == nullptr) return BadKey(k::kIssuedAt, "is missing");
  auto parsed = ParseIssuedAt(*at);
  if (!parsed.ok()) return parsed.status();
  seeds.issued_at = *parsed;
  return seeds;
}

OperatorModeKeys OperatorModeKeyPairs::Public() const {
  return {.operator_key = operator_key.public_key(),
          .system_account = system_account.public_key(),
          .auth_account = auth_account.public_key(),
          .authorizer_user = authorizer_user.public_key(),
          .installation_signing_key = installation_signing.public_key()};
}

Result<OperatorModeKeyPairs> DecodeOperatorModeKeyPairs(const OperatorModeSeeds& seeds,
                                                        std::string_view auth_account_seed) {
  auto op = SeedOf(k::kOperatorSeed, seeds.operator_seed, KeyType::kOperator);
  if (!op.ok()) return op.status();
  auto sys = SeedOf(k::kSystemAccountSeed, seeds.system_account_seed, KeyType::kAccount);
  if (!sys.ok()) return sys.status();
  auto sys_user = SeedOf(k::kSystemUserSeed, seeds.system_user_seed, KeyType::kUser);
  if (!sys_user.ok()) return sys_user.status();
  auto auth = SeedOf("issuer-seed", auth_account_seed, KeyType::kAccount);
  if (!auth.ok()) return auth.status();
  auto authorizer = SeedOf(k::kAuthorizerUserSeed, seeds.authorizer_user_seed, KeyType::kUser);
  if (!authorizer.ok()) return authorizer.status();
  auto signing =
      SeedOf(k::kInstallationSigningSeed, seeds.installation_signing_seed, KeyType::kAccount);
  if (!signing.ok()) return signing.status();
  return OperatorModeKeyPairs{.operator_key = std::move(op).value(),
                              .system_account = std::move(sys).value(),
                              .system_user = std::move(sys_user).value(),
                              .auth_account = std::move(auth).value(),
                              .authorizer_user = std::move(authorizer).value(),
                              .installation_signing = std::move(signing).value(),
                              .sentinel_user = seeds.sentinel_user,
                              .issued_at = seeds.issued_at};
}

Result<KeyPair> InstallationAccountKey(const KeyPair& installation_signing, std::string_view ns,
                                       std::string_view name) {
  std::string label = "switchboard installation account";
  label += '\0';
  label += ns;
  label += '/';
  label += name;
  return natsauth::DeriveKeyPair(installation_signing, KeyType::kAccount, label);
}

Result<std::string> InstallationAccountOf(const SecretData& callout_data, std::string_view ns,
                                          std::string_view name) {
  const std::string* seed = Find(callout_data, k::kInstallationSigningSeed);
  if (seed == nullptr) {
    // Reserved, then appended: `std::string(...) + "..."` moved into the
    // Status here makes gcc 12 at -O2 warn (-Warray-bounds, a false
    // positive about the short-string buffer).
    std::string why;
    why.reserve(64);
    why.append(k::kInstallationSigningSeed).append(" not written yet");
    return Status::FailedPrecondition(std::move(why));
  }
  auto signing = SeedOf(k::kInstallationSigningSeed, *seed, KeyType::kAccount);
  if (!signing.ok()) return Status::FailedPrecondition(signing.status().message());
  auto account = InstallationAccountKey(*signing, ns, name);
  if (!account.ok()) return account.status();
  return account->public_key();
}

Result<OperatorModeJwts> EncodeOperatorModeJwts(const OperatorModeKeyPairs& keys) {
  const OperatorModeKeys pub = keys.Public();
  const int64_t at = keys.issued_at;
  OperatorModeJwts out;
  auto op = natsauth::EncodeOperatorClaims(OperatorClaimsFor(pub, at), keys.operator_key);
  if (!op.ok()) return op.status();
  out.operator_jwt = std::move(op).value();
  auto sys = natsauth::EncodeAccountClaims(SystemAccountClaims(pub, at), keys.operator_key);
  if (!sys.ok()) return sys.status();
  out.system_account_jwt = std::move(sys).value();
  auto auth = natsauth::EncodeAccountClaims(AuthAccountClaims(pub, at), keys.operator_key);
  if (!auth.ok()) return auth.status();
  out.auth_account_jwt = std::move(auth).value();
  auto sentinel =
      natsauth::EncodeUserClaims(SentinelClaims(keys.sentinel_user, at), keys.auth_account);
  if (!sentinel.ok()) return sentinel.status();
  out.sentinel_jwt = std::move(sentinel).value();
  return out;
}

Result<std::string> SystemUserJwt(const OperatorModeKeyPairs& keys, int64_t now) {
  return UserJwt(keys.system_account, keys.system_user, "switchboard-system", now);
}

Result<std::string> AuthorizerUserJwt(const OperatorModeKeyPairs& keys, int64_t now) {
  return UserJwt(keys.auth_account, keys.authorizer_user, "switchboard-authorizer", now);
}

}  // namespace switchboard::operator_logic
