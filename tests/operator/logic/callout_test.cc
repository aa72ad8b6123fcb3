// Auth callout mode's pure decisions (callout.h): tables of named cases.
#include "switchboard/operator_logic/callout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "switchboard/natsauth/nkey.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/secrets.h"
#include "switchboard/testing/directory.h"
#include "switchboard/testing/objects.h"
#include "switchboard/testing/test_ca.h"

namespace switchboard::operator_logic {
namespace {

using nlohmann::json;
using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::Not;

// The test vector of nats-server's auth callout tests.
constexpr char kSeed[] = "SAANDLKMXL6CUS3CP52WIXBEDN6YJ545GDKC65U5JZPPV6WH6ESWUA6YAI";
constexpr char kIssuer[] = "ABJHLOVMPA4CI6R5KLNGOB4GSLNIY7IOUPAJC4YFNDLQVIOBYQGUWVLA";

constexpr const char* kCaA = ::switchboard::testing::kTestCaPem;
constexpr const char* kCaB = ::switchboard::testing::kOtherTestCaPem;

std::string Hash(char c) { return "$2b$06$" + std::string(53, c); }

Time T(int s) { return ParseTime("2026-12-01T10:00:00Z").value() + seconds(s); }

// Counting fakes for the CSPRNG and bcrypt: "hash" of pw is a valid bcrypt
// string spelling pw, so a test can tell which password a hash belongs to.
struct Fakes {
  int generated = 0, hashed = 0, verified = 0;
  static std::string HashOf(std::string_view pw) {
    std::string body(pw.substr(0, 53));
    for (char& c : body) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '.';
    }
    body.resize(53, '.');
    return "$2b$06$" + body;
  }
  CredentialDeps Deps() {
    CredentialDeps d;
    d.generate_password = [this]() -> Result<std::string> {
      return "secret" + std::to_string(++generated);
    };
    d.hash = [this](std::string_view pw, int) -> Result<std::string> {
      ++hashed;
      return HashOf(pw);
    };
    d.verify = [this](std::string_view pw, std::string_view h) -> Result<bool> {
      ++verified;
      return HashOf(pw) == h;
    };
    return d;
  }
};

CalloutKeys Keys() {
  return {kSeed,
          kIssuer,
          {std::string(api::kAuthorizerUsername), "auth-pw", Fakes::HashOf("auth-pw")},
          {std::string(api::kCalloutSystemUsername), "sys-pw", Fakes::HashOf("sys-pw")},
          ""};
}

TEST(SubjectAllowList, IsWhatTheFileRenders) {
  EXPECT_EQ(SubjectAllowList("hatchet.a"), std::vector<std::string>{"hatchet.a.*"});
  EXPECT_EQ(SubjectAllowList("x"), std::vector<std::string>{"x.*"});
  // The include file's permissions are the same list.
  RenderInput in;
  in.server_ns = "nats";
  in.server_name = "shared";
  in.installations.push_back({"a", "h", "hatchet.a", {{"a-h", Hash('a')}}});
  auto file = RenderNatsConfig(in);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_THAT(file->text, HasSubstr("permissions: {publish: {allow: [\"hatchet.a.*\"]}, "
                                    "subscribe: {allow: [\"hatchet.a.*\"]}}"));
}

TEST(CalloutConnectionName, Table) {
  EXPECT_EQ(CalloutConnectionName("team-a-hatchet", 0), "team-a-hatchet#0");
  EXPECT_EQ(CalloutConnectionName("u", 12), "u#12");
}

TEST(CalloutKeys, RoundTrip) {
  const SecretData d = EncodeCalloutKeys(Keys());
  EXPECT_EQ(d.size(), 6u);
  EXPECT_EQ(d.at("issuer-seed"), kSeed);
  EXPECT_EQ(d.at("issuer"), kIssuer);
  EXPECT_EQ(d.at("authorizer-password"), "auth-pw");
  EXPECT_EQ(d.at("system-bcrypt"), Fakes::HashOf("sys-pw"));
  auto back = DecodeCalloutKeys(d);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, Keys());
}

TEST(CalloutKeys, TheCaRoundTripsAndIsWrittenOnlyWhenThere) {
  CalloutKeys keys = Keys();
  keys.ca = std::string(kCaA) + kCaB;
  const SecretData d = EncodeCalloutKeys(keys);
  EXPECT_EQ(d.size(), 7u);
  EXPECT_EQ(d.at("ca.crt"), keys.ca);
  auto back = DecodeCalloutKeys(d);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, keys);
  EXPECT_FALSE(EncodeCalloutKeys(Keys()).contains("ca.crt"));
  // An empty ca.crt is no CA.
  SecretData empty = EncodeCalloutKeys(Keys());
  empty["ca.crt"] = "";
  auto none = DecodeCalloutKeys(empty);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->ca, "");
}

TEST(CheckCaBundle, Table) {
  const std::string a = kCaA, b = kCaB;
  std::string broken = a;
  broken[100] = broken[100] == 'A' ? 'B' : 'A';
  broken.replace(80, 20, "!!!!!!!!!!!!!!!!!!!!");
  struct Case {
    const char* name;
    std::string pem;
    std::string why;  // "" = accepted, else a substring
  } cases[] = {
      {"one certificate", a, ""},
      {"two, with blank lines around", "\n" + a + "\n\n" + b + "\n", ""},
      {"no trailing newline", a.substr(0, a.size() - 1), ""},
      {"empty", "", "no PEM certificate"},
      {"whitespace only", " \n\t", "no PEM certificate"},
      {"plain text", "my ca", "something other than PEM certificates"},
      {"a private key after the certificate",
       a + "-----BEGIN PRIVATE KEY-----\nMIGHAgEA\n-----END PRIVATE KEY-----\n",
       "something other than PEM certificates"},
      {"no END line", a.substr(0, 200), "without its END line"},
      {"a block that does not parse", broken, "does not parse"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string why = CheckCaBundle(c.pem);
    if (c.why.empty()) {
      EXPECT_EQ(why, "");
    } else {
      EXPECT_THAT(why, HasSubstr(c.why));
      if (!c.pem.empty()) {
        EXPECT_THAT(why, Not(HasSubstr(c.pem)));
      }
    }
  }
}

TEST(DecideCalloutCa, Table) {
  const api::SecretKeyRef ref{"nats-ca", "ca.crt"};
  struct Case {
    const char* name;
    std::optional<api::SecretKeyRef> ref;
    std::optional<std::string> found;
    std::optional<std::string> ca;     // nullopt: keep the stored one
    std::vector<std::string> problem;  // substrings; empty = no problem
  } cases[] = {
      {"no caSecretRef: no CA", std::nullopt, std::nullopt, std::string(), {}},
      {"no caSecretRef, a Secret lying around: still none",
       std::nullopt,
       std::string(kCaA),
       std::string(),
       {}},
      {"the CA: copied", ref, std::string(kCaA), std::string(kCaA), {}},
      {"Secret or key missing: kept, and the condition names the ref and the fix",
       ref,
       std::nullopt,
       std::nullopt,
       {"CA Secret nats/nats-ca key \"ca.crt\"", "spec.tls.caSecretRef", "not found", "create it",
        "or remove spec.tls.caSecretRef"}},
      {"an empty key counts as missing", ref, std::string(), std::nullopt, {"not found"}},
      {"not PEM: kept, named, the value not quoted",
       ref,
       std::string("hunter2"),
       std::nullopt,
       {"spec.tls.caSecretRef", "something other than PEM certificates", "put the PEM CA bundle"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    CalloutCaDecision d = DecideCalloutCa("nats", c.ref, c.found);
    EXPECT_EQ(d.ca, c.ca);
    if (c.problem.empty()) {
      EXPECT_EQ(d.problem, "");
    }
    for (const auto& p : c.problem) EXPECT_THAT(d.problem, HasSubstr(p));
    EXPECT_THAT(d.problem, Not(HasSubstr("hunter2")));
    EXPECT_THAT(d.problem, Not(HasSubstr("MIIB")));
  }
}

TEST(PlanCalloutKeys, TheCaFollowsTheRef) {
  SecretData with_a = EncodeCalloutKeys(Keys());
  with_a["ca.crt"] = kCaA;
  SecretData with_garbage = EncodeCalloutKeys(Keys());
  with_garbage["ca.crt"] = "garbage";
  struct Case {
    const char* name;
    std::optional<SecretData> stored;
    std::optional<std::string> ca;
    std::string want;
    bool changed;
    std::string note;  // substring ("" = any)
  } cases[] = {
      {"no CA before or after", EncodeCalloutKeys(Keys()), std::string(), "", false, ""},
      {"a new CA: copied", EncodeCalloutKeys(Keys()), std::string(kCaA), kCaA, true,
       "copied the CA of spec.tls.caSecretRef"},
      {"the same CA: nothing to write", with_a, std::string(kCaA), kCaA, false, ""},
      {"a rotated CA: rewritten", with_a, std::string(kCaB), kCaB, true, "copied the changed CA"},
      {"the ref removed: the CA goes", with_a, std::string(), "", true, "no CA"},
      {"the CA Secret unreadable: the stored CA stays", with_a, std::nullopt, kCaA, false, ""},
      {"unreadable, and what is stored is no CA: dropped", with_garbage, std::nullopt, "", true,
       ""},
      {"nothing stored yet: generated with the CA", std::nullopt, std::string(kCaA), kCaA, true,
       "copied the CA"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Fakes f;
    auto plan = PlanCalloutKeys(c.stored, f.Deps(), c.ca);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_EQ(plan->keys.ca, c.want);
    EXPECT_EQ(plan->changed, c.changed);
    EXPECT_THAT(plan->note, HasSubstr(c.note));
    EXPECT_THAT(plan->note, Not(HasSubstr("BEGIN")));
    auto back = DecodeCalloutKeys(EncodeCalloutKeys(plan->keys));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->ca, c.want);
  }
}

TEST(CalloutKeys, DecodeNamesTheKeyNeverTheValue) {
  auto user_seed = natsauth::KeyPair::Generate(natsauth::KeyType::kUser).value().Seed();
  auto other_issuer = natsauth::KeyPair::Generate(natsauth::KeyType::kAccount).value().public_key();
  struct Case {
    const char* name;
    std::function<void(SecretData&)> edit;
    std::string key;  // named in the message
  } cases[] = {
      {"no seed", [](SecretData& d) { d.erase("issuer-seed"); }, "issuer-seed"},
      {"seed not an nkey", [](SecretData& d) { d["issuer-seed"] = "SAnot-a-seed"; }, "issuer-seed"},
      {"seed of a user, not an account", [&](SecretData& d) { d["issuer-seed"] = user_seed; },
       "issuer-seed"},
      {"no issuer", [](SecretData& d) { d.erase("issuer"); }, "\"issuer\""},
      {"issuer not a public key", [](SecretData& d) { d["issuer"] = kSeed; }, "\"issuer\""},
      {"issuer of another seed", [&](SecretData& d) { d["issuer"] = other_issuer; }, "\"issuer\""},
      {"no authorizer password", [](SecretData& d) { d.erase("authorizer-password"); },
       "authorizer-password"},
      {"empty system password", [](SecretData& d) { d["system-password"] = ""; },
       "system-password"},
      {"authorizer hash not bcrypt",
       [](SecretData& d) { d["authorizer-bcrypt"] = "plaintext-maybe"; }, "authorizer-bcrypt"},
      {"no system hash", [](SecretData& d) { d.erase("system-bcrypt"); }, "system-bcrypt"},
      {"ca.crt not PEM", [](SecretData& d) { d["ca.crt"] = "not-a-ca"; }, "ca.crt"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    SecretData d = EncodeCalloutKeys(Keys());
    c.edit(d);
    auto r = DecodeCalloutKeys(d);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr(c.key));
    for (const auto& [k, v] : d) {
      if (k == "issuer") continue;  // public
      if (!v.empty()) {
        EXPECT_THAT(r.status().message(), Not(HasSubstr(v))) << k;
      }
    }
  }
}

TEST(PlanCalloutKeys, GeneratesOnlyWhatIsMissing) {
  const SecretData full = EncodeCalloutKeys(Keys());
  struct Case {
    const char* name;
    std::optional<SecretData> stored;
    bool changed;
    int generated, hashed;
    bool same_issuer;  // the stored issuer is kept
    std::string note;  // substring
  } cases[] = {
      {"nothing stored: issuer and both passwords", std::nullopt, true, 2, 2, false,
       "generated issuer"},
      {"all stored and valid: nothing", full, false, 0, 0, true, ""},
      {"authorizer password lost: a new one, issuer kept",
       [&] {
         SecretData d = full;
         d.erase("authorizer-password");
         return d;
       }(),
       true, 1, 1, true, "generated a password for switchboard-authorizer"},
      {"system hash lost: hashed again, password kept",
       [&] {
         SecretData d = full;
         d.erase("system-bcrypt");
         return d;
       }(),
       true, 0, 1, true, "hashed the password of switchboard-system"},
      {"authorizer hash not bcrypt: hashed again",
       [&] {
         SecretData d = full;
         d["authorizer-bcrypt"] = "x";
         return d;
       }(),
       true, 0, 1, true, "hashed"},
      {"issuer public key lost: derived from the seed",
       [&] {
         SecretData d = full;
         d.erase("issuer");
         return d;
       }(),
       true, 0, 0, true, "restored the issuer"},
      {"seed lost: a new issuer, and the note says the servers need a restart",
       [&] {
         SecretData d = full;
         d.erase("issuer-seed");
         return d;
       }(),
       true, 0, 0, false, "had no seed: every NATS server of this NatsServer needs a restart"},
      {"a key this code does not write: rewritten without it",
       [&] {
         SecretData d = full;
         d["stray"] = "x";
         return d;
       }(),
       true, 0, 0, true, ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Fakes f;
    auto plan = PlanCalloutKeys(c.stored, f.Deps());
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_EQ(plan->changed, c.changed);
    EXPECT_EQ(f.generated, c.generated);
    EXPECT_EQ(f.hashed, c.hashed);
    EXPECT_EQ(plan->keys.issuer == kIssuer, c.same_issuer);
    EXPECT_THAT(plan->note, HasSubstr(c.note));
    // Whatever was planned decodes, and the note holds no secret.
    auto back = DecodeCalloutKeys(EncodeCalloutKeys(plan->keys));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, plan->keys);
    EXPECT_EQ(plan->keys.authorizer.username, api::kAuthorizerUsername);
    EXPECT_EQ(plan->keys.system.username, api::kCalloutSystemUsername);
    for (const auto& secret :
         {plan->keys.issuer_seed, plan->keys.authorizer.password, plan->keys.system.password}) {
      EXPECT_THAT(plan->note, Not(HasSubstr(secret)));
    }
  }
}

TEST(PlanCalloutKeys, RealGeneration) {
  auto plan = PlanCalloutKeys(std::nullopt);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(natsauth::IsPublicKey(plan->keys.issuer, natsauth::KeyType::kAccount));
  EXPECT_EQ(plan->keys.issuer_seed.substr(0, 2), "SA");
  auto ok = BcryptVerify(plan->keys.authorizer.password, plan->keys.authorizer.bcrypt);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(*ok);
  EXPECT_NE(plan->keys.authorizer.password, plan->keys.system.password);
}

TEST(PlanCalloutKeys, AnUnusableStoredSeedIsNeverReplaced) {
  SecretData d = EncodeCalloutKeys(Keys());
  d["issuer-seed"] = "SAbroken";
  Fakes f;
  auto plan = PlanCalloutKeys(d, f.Deps());
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("issuer-seed"));
  EXPECT_THAT(plan.status().message(), Not(HasSubstr("SAbroken")));
  EXPECT_EQ(f.generated, 0);
}

CalloutConfigInput ConfigInput() {
  CalloutConfigInput in;
  in.server_ns = "nats";
  in.server_name = "shared";
  in.issuer = kIssuer;
  in.authorizer_bcrypt = Hash('a');
  in.system_bcrypt = Hash('s');
  return in;
}

TEST(RenderCalloutConfig, Golden) {
  auto text = RenderCalloutConfig(ConfigInput());
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text,
            "# Generated by switchboard for NatsServer nats/shared. Do not edit.\n"
            "# provisioning: AuthCallout; users of account HATCHET are authorized by "
            "switchboard-authorizer\n"
            "max_payload: 16777216\n"
            "accounts {\n"
            "  \"SWITCHBOARD_AUTH\": {users: [{user: \"switchboard-authorizer\", password: \"" +
                Hash('a') +
                "\"}]}\n"
                "  \"HATCHET\": {}\n"
                "  \"SYS\": {users: [{user: \"switchboard-system\", password: \"" +
                Hash('s') +
                "\"}]}\n"
                "}\n"
                "system_account: \"SYS\"\n"
                "authorization {\n"
                "  timeout: 5\n"
                "  auth_callout {\n"
                "    issuer: \"" +
                std::string(kIssuer) +
                "\"\n"
                "    account: \"SWITCHBOARD_AUTH\"\n"
                "    auth_users: [\"switchboard-authorizer\"]\n"
                "    allowed_accounts: [\"HATCHET\"]\n"
                "  }\n"
                "}\n");
  // Deterministic: the same input, the same bytes.
  EXPECT_EQ(*RenderCalloutConfig(ConfigInput()), *text);
  CalloutConfigInput other = ConfigInput();
  other.account = "tenants_1";
  other.max_payload = 64 * 1024 * 1024;
  auto t2 = RenderCalloutConfig(other);
  ASSERT_TRUE(t2.ok()) << t2.status().ToString();
  EXPECT_THAT(*t2, HasSubstr("  \"tenants_1\": {}\n"));
  EXPECT_THAT(*t2, HasSubstr("allowed_accounts: [\"tenants_1\"]"));
  EXPECT_THAT(*t2, HasSubstr("max_payload: 67108864\n"));
}

TEST(RenderCalloutConfig, Refusals) {
  auto user_key = natsauth::KeyPair::Generate(natsauth::KeyType::kUser).value().public_key();
  struct Case {
    const char* name;
    std::function<void(CalloutConfigInput&)> edit;
    std::string field;       // named in the message
    std::string never = "";  // never in the message
  } cases[] = {
      {"namespace not a Kubernetes name", [](auto& in) { in.server_ns = "Nats\n"; },
       "metadata.namespace"},
      {"name empty", [](auto& in) { in.server_name = ""; }, "metadata.name"},
      {"max_payload below 16 MiB", [](auto& in) { in.max_payload = 16 * 1024 * 1024 - 1; },
       "spec.maxPayload"},
      {"max_payload above 64 MiB", [](auto& in) { in.max_payload = 64 * 1024 * 1024 + 1; },
       "spec.maxPayload"},
      {"account empty", [](auto& in) { in.account = ""; }, "authCallout.account"},
      {"account with a quote", [](auto& in) { in.account = "a\"b"; }, "authCallout.account"},
      {"account too long", [](auto& in) { in.account = std::string(65, 'a'); },
       "authCallout.account"},
      {"account SYS", [](auto& in) { in.account = "SYS"; }, "system account"},
      {"account SWITCHBOARD_AUTH", [](auto& in) { in.account = "SWITCHBOARD_AUTH"; },
       "authorizer's own user"},
      {"account $G", [](auto& in) { in.account = "$G"; }, "authCallout.account"},
      {"issuer empty", [](auto& in) { in.issuer = ""; }, "issuer"},
      {"issuer a seed (the secret)", [](auto& in) { in.issuer = kSeed; }, "issuer", kSeed},
      {"issuer a user key", [&](auto& in) { in.issuer = user_key; }, "issuer"},
      {"issuer with a quote", [](auto& in) { in.issuer = std::string(kIssuer) + "\""; }, "issuer"},
      {"authorizer hash plaintext", [](auto& in) { in.authorizer_bcrypt = "hunter2"; },
       "authorizer-bcrypt", "hunter2"},
      {"system hash plaintext", [](auto& in) { in.system_bcrypt = "hunter3"; }, "system-bcrypt",
       "hunter3"},
      {"timeout zero", [](auto& in) { in.timeout_seconds = 0; }, "timeout"},
      {"timeout above 60", [](auto& in) { in.timeout_seconds = 61; }, "timeout"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    CalloutConfigInput in = ConfigInput();
    c.edit(in);
    auto r = RenderCalloutConfig(in);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr(c.field));
    if (!c.never.empty()) {
      EXPECT_THAT(r.status().message(), Not(HasSubstr(c.never)));
    }
  }
  // The bounds themselves are accepted.
  for (int64_t mp : {int64_t{16} * 1024 * 1024, int64_t{64} * 1024 * 1024}) {
    CalloutConfigInput in = ConfigInput();
    in.max_payload = mp;
    EXPECT_TRUE(RenderCalloutConfig(in).ok()) << mp;
  }
}

// --- CollectDirectory -------------------------------------------------

json Server(const std::string& account = "") {
  return testing::ServerBuilder()
      .Uid("srv-uid")
      .Url("nats://n:4222")
      .AllowList({"a", "b", "c"})
      .Callout(account);
}

json Backend(const std::string& ns, const std::string& name, std::optional<int> created = 0,
             const std::string& prefix = "") {
  testing::BackendBuilder b(ns, name);
  b.Uid(ns + "-" + name + "-uid").Prefix(prefix.empty() ? "hatchet." + ns + "." + name : prefix);
  if (created) b.Created(FormatTime(T(*created)));
  return b;
}

CredentialState State(const std::string& username, const std::string& password) {
  CredentialState s;
  s.current = {username, password, Fakes::HashOf(password)};
  return s;
}

struct World {
  std::vector<json> backends;
  std::map<std::string, json> secrets;
  void Add(json backend, std::optional<CredentialState> state) {
    const std::string ns = backend["metadata"]["namespace"];
    const std::string name = backend["metadata"]["name"];
    if (state) {
      json s = CredentialsSecret({ns, name, ns + "-" + name + "-uid"}, *state);
      secrets[ns + "/" + s["metadata"]["name"].get<std::string>()] = s;
    }
    backends.push_back(std::move(backend));
  }
  std::vector<const json*> Ptrs() const {
    std::vector<const json*> p;
    for (const auto& b : backends) p.push_back(&b);
    return p;
  }
  SecretLookup Lookup() const {
    return [this](std::string_view ns, std::string_view name) -> const json* {
      auto it = secrets.find(std::string(ns) + "/" + std::string(name));
      return it == secrets.end() ? nullptr : &it->second;
    };
  }
  Directory Collect(const json& server = Server()) const {
    auto d = CollectDirectory(server, Ptrs(), Lookup());
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return d.ok() ? *d : Directory{};
  }
};

std::vector<std::string> Users(const Directory& d) {
  std::vector<std::string> out;
  for (const auto& [user, e] : d.by_user) {
    out.push_back(e.ns() + "/" + e.name() + ":" + std::string(user));
  }
  return out;
}

TEST(CollectDirectory, WhoIsInIt) {
  struct Case {
    const char* name;
    std::function<void(World&)> setup;
    std::vector<std::string> users;
    std::string skipped;  // substring of the one skip line, "" when none
  } cases[] = {
      {"bound, owned credentials: its user",
       [](World& w) { w.Add(Backend("a", "h"), State("a-h", "pw")); },
       {"a/h:a-h"},
       ""},
      {"bound to another server: ignored",
       [](World& w) {
         json b = Backend("a", "h");
         b["spec"]["nats"]["serverRef"]["name"] = "other";
         w.Add(b, State("a-h", "pw"));
       },
       {},
       ""},
      {"being deleted: out at once",
       [](World& w) {
         json b = Backend("a", "h");
         b["metadata"]["deletionTimestamp"] = "2026-12-01T10:00:00Z";
         w.Add(b, State("a-h", "pw"));
       },
       {},
       "being deleted"},
      {"namespace not admitted",
       [](World& w) { w.Add(Backend("z", "h"), State("z-h", "pw")); },
       {},
       "not admitted"},
      {"no credentials Secret yet",
       [](World& w) { w.Add(Backend("a", "h"), std::nullopt); },
       {},
       "no credentials Secret"},
      {"credentials Secret of another uid",
       [](World& w) {
         w.Add(Backend("a", "h"), State("a-h", "pw"));
         w.secrets.begin()->second["metadata"]["ownerReferences"][0]["uid"] = "other";
       },
       {},
       "not owned"},
      {"SecretConflict",
       [](World& w) {
         w.Add(Backend("a", "h"), State("a-h", "pw"));
         w.secrets.begin()
             ->second["metadata"]["annotations"][std::string(kSecretConflictAnnotation)] = "x";
       },
       {},
       "SecretConflict"},
      {"credentials Secret that does not decode",
       [](World& w) {
         w.Add(Backend("a", "h"), State("a-h", "pw"));
         w.secrets.begin()->second["data"].erase("bcrypt");
       },
       {},
       "bcrypt"},
      {"user name taken by an older backend: the older keeps it",
       [](World& w) {
         w.Add(Backend("a", "new", 100), State("same", "pw1"));
         w.Add(Backend("b", "old", 5), State("same", "pw2"));
       },
       {"b/old:same"},
       "already used by b/old"},
      {"prefix taken by an older backend: the older keeps it",
       [](World& w) {
         w.Add(Backend("a", "new", 100, "hatchet.p"), State("a-new", "pw1"));
         w.Add(Backend("b", "old", 5, "hatchet.p"), State("b-old", "pw2"));
       },
       {"b/old:b-old"},
       "already used by b/old"},
      {"prefix the file could not carry",
       [](World& w) { w.Add(Backend("a", "h", 0, "hatchet.*"), State("a-h", "pw")); },
       {},
       "wildcard"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    World w;
    c.setup(w);
    Directory d = w.Collect();
    EXPECT_EQ(Users(d), c.users);
    EXPECT_EQ(d.server_ns, "nats");
    EXPECT_EQ(d.server_name, "shared");
    EXPECT_EQ(d.account, "HATCHET");
    if (c.skipped.empty()) {
      EXPECT_THAT(d.skipped, ::testing::IsEmpty());
    } else {
      ASSERT_EQ(d.skipped.size(), 1u) << ::testing::PrintToString(d.skipped);
      EXPECT_THAT(d.skipped[0], HasSubstr(c.skipped));
      // Skip lines never carry a password.
      EXPECT_THAT(d.skipped[0], Not(HasSubstr("pw")));
    }
  }
}

TEST(CollectDirectory, TheSameSelectionAsTheIncludeFile) {
  // A mixed world: both modes let in exactly the same users.
  World w;
  w.Add(Backend("a", "one", 1), State("a-one", "pw1"));
  w.Add(Backend("a", "two", 2), State("a-one", "pw2"));  // name taken
  w.Add(Backend("b", "three", 3), std::nullopt);
  w.Add(Backend("z", "four", 4), State("z-four", "pw4"));                   // namespace
  w.Add(Backend("c", "five", 5, "hatchet.a.one"), State("c-five", "pw5"));  // prefix taken
  w.Add(Backend("c", "six", 6), State("c-six", "pw6"));
  json deleting = Backend("c", "seven", 7);
  deleting["metadata"]["deletionTimestamp"] = "2026-12-01T10:00:00Z";
  w.Add(deleting, State("c-seven", "pw7"));

  json file_server = Server();
  file_server["spec"].erase("provisioning");
  auto collected = CollectInstallations(file_server, w.Ptrs(), w.Lookup());
  ASSERT_TRUE(collected.ok());
  collected->input.max_bytes.reset();
  auto file = RenderNatsConfig(collected->input);
  ASSERT_TRUE(file.ok());
  std::vector<std::string> in_file;
  for (const NatsUser& u : UsersInConfig(file->text)) in_file.push_back(u.username);
  std::sort(in_file.begin(), in_file.end());

  Directory d = w.Collect();
  std::vector<std::string> in_directory;
  for (const auto& [user, e] : d.by_user) in_directory.emplace_back(user);
  EXPECT_EQ(in_directory, in_file);
  EXPECT_EQ(in_directory, (std::vector<std::string>{"a-one", "c-six"}));
  EXPECT_EQ(d.skipped.size(), collected->skipped.size() + file->rejected.size());
}

// An AcceptedPassword's values (it holds views into its entry's record).
struct Want {
  std::string password, bcrypt;
  int generation = 0;
  std::optional<Time> until;
  bool operator==(const Want&) const = default;
};
Want WantOf(const AcceptedPassword& p) {
  return {std::string(p.password), std::string(p.bcrypt), p.generation, p.until};
}

TEST(CollectDirectory, PasswordsOfARotation) {
  CredentialState none = State("u", "new");
  none.rotation_count = 3;
  CredentialState staged = none;
  staged.phase = RotationPhase::kStaged;
  staged.previous = Credentials{"u", "old", Fakes::HashOf("old")};
  CredentialState retiring = staged;
  retiring.phase = RotationPhase::kRetiring;
  retiring.retires_at = T(600);
  CredentialState hash_only = retiring;  // adopted credentials: no password copy
  hash_only.previous->password.clear();
  CredentialState renamed = retiring;  // a file-mode rotation: another user name
  renamed.previous->username = "u-r2";

  struct Case {
    const char* name;
    CredentialState state;
    std::map<std::string, std::vector<Want>> users;
  } cases[] = {
      {"no rotation: the current password",
       none,
       {{"u", {{"new", Fakes::HashOf("new"), 3, std::nullopt}}}}},
      {"Staged: both, the old one without an end",
       staged,
       {{"u",
         {{"new", Fakes::HashOf("new"), 3, std::nullopt},
          {"old", Fakes::HashOf("old"), 2, std::nullopt}}}}},
      {"Retiring: the old one until retiresAt",
       retiring,
       {{"u",
         {{"new", Fakes::HashOf("new"), 3, std::nullopt},
          {"old", Fakes::HashOf("old"), 2, T(600)}}}}},
      {"previous without its password: its hash",
       hash_only,
       {{"u",
         {{"new", Fakes::HashOf("new"), 3, std::nullopt}, {"", Fakes::HashOf("old"), 2, T(600)}}}}},
      {"previous under another name: two entries",
       renamed,
       {{"u", {{"new", Fakes::HashOf("new"), 3, std::nullopt}}},
        {"u-r2", {{"old", Fakes::HashOf("old"), 2, T(600)}}}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    World w;
    w.Add(Backend("a", "h"), c.state);
    Directory d = w.Collect();
    EXPECT_THAT(d.skipped, ::testing::IsEmpty());
    std::map<std::string, std::vector<Want>> got;
    for (const auto& [user, e] : d.by_user) {
      for (const AcceptedPassword& p : e.passwords()) got[std::string(user)].push_back(WantOf(p));
      EXPECT_EQ(e.subject_prefix(), "hatchet.a.h");
    }
    EXPECT_EQ(got, c.users);
  }
}

TEST(CollectDirectory, AccountAndInputOrder) {
  World w;
  for (int i = 0; i < 20; ++i) {
    w.Add(Backend("a", "h" + std::to_string(i), i), State("a-h" + std::to_string(i), "pw"));
  }
  Directory d = w.Collect(Server("TENANTS"));
  EXPECT_EQ(d.account, "TENANTS");
  std::mt19937 rng(7);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(w.backends.begin(), w.backends.end(), rng);
    EXPECT_EQ(Users(w.Collect(Server("TENANTS"))), Users(d));
  }
  auto bad = CollectDirectory(Server("SYS"), w.Ptrs(), w.Lookup());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("authCallout.account"));
}

// --- DecideAuthorization ----------------------------------------------

Directory TestDirectory() {
  Directory d;
  d.server_ns = "nats";
  d.server_name = "shared";
  d.account = "HATCHET";
  // a-h: a rotation that keeps the user name, the old password retiring
  // at T(100); b-h: a hash only; c-h: the previous user of a rotation whose
  // current user is another name and that is over, so no password.
  CredentialState a;
  a.current = {"a-h", "current-pw", Fakes::HashOf("current-pw")};
  a.previous = Credentials{"a-h", "retiring-pw", Fakes::HashOf("retiring-pw")};
  a.phase = RotationPhase::kRetiring;
  a.rotation_count = 4;
  a.retires_at = T(100);
  CredentialState b;
  b.current = {"b-h", "", Fakes::HashOf("hashed-pw")};
  CredentialState c;
  c.current = {"c-h2", "other-pw", ""};
  c.previous = Credentials{"c-h", "", ""};
  for (auto e : {switchboard::testing::DirectoryEntryOf("a", "h", "hatchet.a", a),
                 switchboard::testing::DirectoryEntryOf("b", "h", "hatchet.b", b),
                 switchboard::testing::DirectoryEntryOf("c", "h", "hatchet.c", c, "c-h")}) {
    d.Add(e);
  }
  return d;
}

TEST(DecideAuthorization, Table) {
  struct Case {
    const char* name;
    std::string user, password;
    int now;
    Denial denial;
    std::string connection_name = "";  // allowed only
    int verifies = 0;                  // bcrypt checks it cost
    std::string message = "";          // substring
  } cases[] = {
      {"current password", "a-h", "current-pw", 0, Denial::kNone, "a-h#4", 0, "allowed"},
      {"retiring password before retiresAt", "a-h", "retiring-pw", 99, Denial::kNone, "a-h#3"},
      {"retiring password at retiresAt", "a-h", "retiring-pw", 100, Denial::kPasswordRetired, "", 0,
       "retired at 2026-12-01T10:01:40Z"},
      {"current password after the old one retired", "a-h", "current-pw", 1000, Denial::kNone,
       "a-h#4"},
      {"wrong password", "a-h", "current-px", 0, Denial::kWrongPassword, "", 0,
       "user \"a-h\" (a/h): wrong password"},
      {"a prefix of the password", "a-h", "current", 0, Denial::kWrongPassword},
      {"the password and more", "a-h", "current-pw2", 0, Denial::kWrongPassword},
      {"another user's password", "a-h", "hashed-pw", 0, Denial::kWrongPassword},
      {"hash only: verified with bcrypt", "b-h", "hashed-pw", 0, Denial::kNone, "b-h#0", 1},
      {"hash only, wrong password", "b-h", "nope", 0, Denial::kWrongPassword, "", 1},
      {"an entry without passwords", "c-h", "anything", 0, Denial::kWrongPassword},
      {"unknown user", "nobody", "pw", 0, Denial::kUnknownUser, "", 0,
       "user \"nobody\" is no installation's on NatsServer nats/shared"},
      {"unknown user with a control character is printed safely", "x\ny", "pw", 0,
       Denial::kUnknownUser, "", 0, "user \"x?y\""},
      {"no user name", "", "pw", 0, Denial::kNoCredentials},
      {"no password", "a-h", "", 0, Denial::kNoCredentials},
  };
  const Directory d = TestDirectory();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Fakes f;
    AuthorizationDecision got = DecideAuthorization(d, c.user, c.password, T(c.now), f.Deps());
    EXPECT_EQ(got.denial, c.denial) << DenialReason(got.denial) << ": " << got.message;
    EXPECT_EQ(f.verified, c.verifies);
    EXPECT_FALSE(got.message.empty());
    EXPECT_THAT(got.message, HasSubstr(c.message));
    if (!c.password.empty()) {
      EXPECT_THAT(got.message, Not(HasSubstr(c.password)));
    }
    for (const auto& [user, e] : d.by_user) {
      for (const auto& p : e.passwords()) {
        if (!p.password.empty()) {
          EXPECT_THAT(got.message, Not(HasSubstr(p.password)));
        }
      }
    }
    if (c.denial == Denial::kNone) {
      const DirectoryEntry& e = d.by_user.at(c.user);
      EXPECT_EQ(got.ns, e.ns());
      EXPECT_EQ(got.name, e.name());
      EXPECT_EQ(got.username, c.user);
      EXPECT_EQ(got.account, "HATCHET");
      EXPECT_EQ(got.connection_name, c.connection_name);
      EXPECT_EQ(got.allow, SubjectAllowList(e.subject_prefix()));
    } else {
      EXPECT_EQ(got.account, "");
      EXPECT_TRUE(got.allow.empty());
      EXPECT_EQ(got.connection_name, "");
    }
  }
}

TEST(DecideAuthorization, RealBcrypt) {
  Directory d = TestDirectory();
  auto hash = BcryptHash("real-pw", 4);
  ASSERT_TRUE(hash.ok());
  CredentialState b;
  b.current = {"b-h", "", *hash};
  b.rotation_count = 1;
  d.by_user.erase("b-h");
  d.Add(switchboard::testing::DirectoryEntryOf("b", "h", "hatchet.b", b));
  EXPECT_EQ(DecideAuthorization(d, "b-h", "real-pw", T(0)).denial, Denial::kNone);
  EXPECT_EQ(DecideAuthorization(d, "b-h", "real-px", T(0)).denial, Denial::kWrongPassword);
}

TEST(DenialReason, EveryDenialHasALabel) {
  EXPECT_EQ(DenialReason(Denial::kNone), "Allowed");
  EXPECT_EQ(DenialReason(Denial::kUnknownUser), "UnknownUser");
  EXPECT_EQ(DenialReason(Denial::kWrongPassword), "WrongPassword");
  EXPECT_EQ(DenialReason(Denial::kPasswordRetired), "PasswordRetired");
  EXPECT_EQ(DenialReason(Denial::kNoCredentials), "NoCredentials");
}

// --- ConnectionsToClose -----------------------------------------------

TEST(ConnectionsToClose, Table) {
  const Directory d = TestDirectory();
  struct Case {
    const char* name;
    LiveConnection conn;
    int now;
    bool close;
  } cases[] = {
      {"current generation", {"S1", 1, "HATCHET", "a-h#4"}, 0, false},
      {"retiring generation before retiresAt", {"S1", 2, "HATCHET", "a-h#3"}, 99, false},
      {"retiring generation at retiresAt", {"S1", 3, "HATCHET", "a-h#3"}, 100, true},
      {"an older generation", {"S1", 4, "HATCHET", "a-h#2"}, 0, true},
      {"a newer generation than known", {"S1", 5, "HATCHET", "a-h#5"}, 0, true},
      {"deleted installation", {"S2", 6, "HATCHET", "gone#0"}, 0, true},
      {"name without a generation", {"S2", 7, "HATCHET", "a-h"}, 0, true},
      {"generation not a number", {"S2", 8, "HATCHET", "a-h#x"}, 0, true},
      {"negative generation", {"S2", 9, "HATCHET", "a-h#-1"}, 0, true},
      {"empty name", {"S2", 10, "HATCHET", ""}, 0, true},
      {"another account: the authorizer's own", {"S1", 11, "SWITCHBOARD_AUTH", "x"}, 0, false},
      {"the system account", {"S1", 12, "SYS", "gone#0"}, 0, false},
      {"hash-only entry", {"S3", 13, "HATCHET", "b-h#0"}, 0, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ConnectionsToClose(d, {c.conn}, T(c.now));
    EXPECT_EQ(got.size(), c.close ? 1u : 0u);
  }
  // Together: only those, in (server, cid) order.
  std::vector<LiveConnection> all;
  for (const auto& c : cases) all.push_back(c.conn);
  std::reverse(all.begin(), all.end());
  auto got = ConnectionsToClose(d, all, T(0));
  std::vector<uint64_t> cids;
  for (const auto& c : got) cids.push_back(c.cid);
  EXPECT_EQ(cids, (std::vector<uint64_t>{4, 5, 6, 7, 8, 9, 10}));
}

TEST(ConnectionsToCloseByAccount, Table) {
  const Directory d = TestDirectory();
  // Operator mode: an account per installation; the directory's own
  // account name is not where they are.
  const std::map<std::string, std::string> accounts = {{"AA", "a-h"}, {"AB", "b-h"}};
  struct Case {
    const char* name;
    LiveConnection conn;
    int now;
    bool close;
  } cases[] = {
      {"current generation in its account", {"S1", 1, "AA", "a-h#4"}, 0, false},
      {"retiring generation before retiresAt", {"S1", 2, "AA", "a-h#3"}, 99, false},
      {"retiring generation at retiresAt", {"S1", 3, "AA", "a-h#3"}, 100, true},
      {"an older generation", {"S1", 4, "AA", "a-h#2"}, 0, true},
      {"another installation's user in this account", {"S1", 5, "AB", "a-h#4"}, 0, true},
      {"name without a generation", {"S2", 6, "AB", "b-h"}, 0, true},
      {"hash-only entry", {"S2", 7, "AB", "b-h#0"}, 0, false},
      {"the shared account of config mode: not this mode's",
       {"S2", 8, "HATCHET", "gone#0"},
       0,
       false},
      {"an account that is no installation's (auth, system, deleted)",
       {"S3", 9, "AZ", "x#0"},
       0,
       false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ConnectionsToCloseByAccount(d, accounts, {c.conn}, T(c.now));
    EXPECT_EQ(got.size(), c.close ? 1u : 0u);
  }
  std::vector<LiveConnection> all;
  for (const auto& c : cases) all.push_back(c.conn);
  std::reverse(all.begin(), all.end());
  auto got = ConnectionsToCloseByAccount(d, accounts, all, T(0));
  std::vector<uint64_t> cids;
  for (const auto& c : got) cids.push_back(c.cid);
  EXPECT_EQ(cids, (std::vector<uint64_t>{4, 5, 6}));
}

}  // namespace
}  // namespace switchboard::operator_logic
