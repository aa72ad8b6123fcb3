// Single-object rules, one table row per rule and edge: each row starts from
// a valid object, breaks it in one place and names the finding it expects
// (level, field path, and a piece of the message that carries the fix).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "switchboard/rules/validate.h"
#include "test_objects.h"

namespace switchboard::rules {
namespace {

using nlohmann::json;
using testing::Backend;
using testing::Server;

enum class Expect { kOk, kError, kWarning };

struct Case {
  const char* name;
  bool server;  // judge Server() instead of Backend()
  std::function<void(json&)> mutate;
  Expect expect;
  const char* field = "";
  const char* contains = "";
};

std::string Dump(const Report& r) {
  std::string s;
  for (const auto& f : r.errors) s += "  error: " + f.ToString() + " [" + f.rule + "]\n";
  for (const auto& f : r.warnings) s += "  warning: " + f.ToString() + " [" + f.rule + "]\n";
  return s;
}

void SetPath(json& o, const std::string& pointer, json v) { o[json::json_pointer(pointer)] = v; }
std::function<void(json&)> Set(const std::string& pointer, json v) {
  return [pointer, v](json& o) { SetPath(o, pointer, v); };
}
std::function<void(json&)> Erase(const std::string& parent, const std::string& key) {
  return [parent, key](json& o) { o[json::json_pointer(parent)].erase(key); };
}
std::function<void(json&)> Prefix(const std::string& p) {
  return Set("/spec/nats/subjectPrefix", p);
}
std::function<void(json&)> Url(const std::string& u) { return Set("/spec/url", u); }
std::function<void(json&)> Payload(json v) { return Set("/spec/maxPayload", v); }
std::function<void(json&)> Rabbit() {
  return [](json& o) {
    o["spec"] = {{"kind", "rabbitmq"},
                 {"rabbitmq", {{"urlSecretRef", {{"name", "rmq"}, {"key", "url"}}}}}};
  };
}
std::function<void(json&)> Postgres(json block) {
  return [block](json& o) { o["spec"] = {{"kind", "postgres"}, {"postgres", block}}; };
}
std::function<void(json&)> Then(std::function<void(json&)> a, std::function<void(json&)> b) {
  return [a, b](json& o) {
    a(o);
    b(o);
  };
}

const std::string k200(200, 'a');

const Case kCases[] = {
    // --- kind and blocks
    {"valid backend", false, [](json&) {}, Expect::kOk},
    {"valid server", true, [](json&) {}, Expect::kOk},
    {"object kind missing", false, Erase("", "kind"), Expect::kError, "kind", "required"},
    {"object kind unknown", false, Set("/kind", "Pubsubbackend"), Expect::kError, "kind",
     "did you mean PubSubBackend"},
    {"apiVersion wrong", false, Set("/apiVersion", "pubsub.switchboard.dev/v1"), Expect::kError,
     "apiVersion", "use pubsub.switchboard.dev/v1alpha1"},
    {"apiVersion missing", false, Erase("", "apiVersion"), Expect::kError, "apiVersion",
     "required"},
    {"spec missing", false, Erase("", "spec"), Expect::kError, "spec", "required"},
    {"spec not an object", false, Set("/spec", "nats"), Expect::kError, "spec",
     "must be an object"},
    {"spec.kind missing", false, Erase("/spec", "kind"), Expect::kError, "spec.kind", "required"},
    {"spec.kind unknown", false, Set("/spec/kind", "kafka"), Expect::kError, "spec.kind",
     "use nats, rabbitmq or postgres"},
    {"spec.kind wrong case", false, Set("/spec/kind", "NATS"), Expect::kError, "spec.kind",
     "did you mean \"nats\"?"},
    {"spec.kind not a string", false, Set("/spec/kind", 3), Expect::kError, "spec.kind",
     "must be a string"},
    {"nats block missing", false, Erase("/spec", "nats"), Expect::kError, "spec.nats",
     "required when spec.kind is nats"},
    {"extra rabbitmq block", false,
     Set("/spec/rabbitmq", {{"urlSecretRef", {{"name", "r"}, {"key", "url"}}}}), Expect::kError,
     "spec.rabbitmq", "must not be set when spec.kind is nats"},
    {"extra postgres block", false, Set("/spec/postgres", json::object()), Expect::kError,
     "spec.postgres", "must not be set when spec.kind is nats"},
    {"postgres without block", false,
     [](json& o) {
       o["spec"] = {{"kind", "postgres"}};
     },
     Expect::kError, "spec.postgres", "required when spec.kind is postgres"},
    {"null block counts as absent", false, Then(Rabbit(), Set("/spec/nats", nullptr)), Expect::kOk},
    {"unknown spec field with hint", false, Set("/spec/nats/subjectprefix", "x"), Expect::kError,
     "spec.nats.subjectprefix", "did you mean \"subjectPrefix\"?"},
    {"unknown spec field listing", false, Set("/spec/zzz", 1), Expect::kError, "spec.zzz",
     "known fields here are kind, nats"},
    {"unknown top-level field", false, Set("/specs", json::object()), Expect::kError, "specs",
     "did you mean \"spec\"?"},
    {"serverRef missing", false, Erase("/spec/nats", "serverRef"), Expect::kError,
     "spec.nats.serverRef", "required"},
    {"serverRef name missing", false, Erase("/spec/nats/serverRef", "name"), Expect::kError,
     "spec.nats.serverRef.name", "required"},
    {"serverRef name invalid", false, Set("/spec/nats/serverRef/name", "Shared"), Expect::kError,
     "spec.nats.serverRef.name", "lowercase"},
    {"serverRef namespace with dot", false, Set("/spec/nats/serverRef/namespace", "a.b"),
     Expect::kError, "spec.nats.serverRef.namespace", "must not contain '.'"},
    // --- metadata
    {"name missing", false, Erase("/metadata", "name"), Expect::kError, "metadata.name",
     "required"},
    {"generateName instead of name", false,
     Then(Erase("/metadata", "name"), Set("/metadata/generateName", "hatchet-")), Expect::kOk},
    {"name uppercase", false, Set("/metadata/name", "Hatchet"), Expect::kError, "metadata.name",
     "lowercase"},
    {"name with underscore", false, Set("/metadata/name", "hat_chet"), Expect::kError,
     "metadata.name", "'_' is not allowed"},
    {"name too long for derived secrets", false, Set("/metadata/name", std::string(240, 'a')),
     Expect::kError, "metadata.name", "at most 236"},
    {"name over 253", true, Set("/metadata/name", std::string(254, 'a')), Expect::kError,
     "metadata.name", "at most 253"},
    {"namespace invalid", false, Set("/metadata/namespace", "-team"), Expect::kError,
     "metadata.namespace", "start and end"},
    // --- subject prefix
    {"prefix empty token", false, Prefix("hatchet..prod"), Expect::kError,
     "spec.nats.subjectPrefix",
     "token 2 is empty in \"hatchet..prod\"; use non-empty dot-separated tokens"},
    {"prefix empty token 3", false, Prefix("a.b..c"), Expect::kError, "spec.nats.subjectPrefix",
     "token 3 is empty"},
    {"prefix empty", false, Prefix(""), Expect::kError, "spec.nats.subjectPrefix",
     "must not be empty"},
    {"prefix whitespace", false, Prefix("hatchet prod"), Expect::kError, "spec.nats.subjectPrefix",
     "whitespace"},
    {"prefix tab", false, Prefix("hatchet\tprod"), Expect::kError, "spec.nats.subjectPrefix",
     "whitespace"},
    {"prefix star", false, Prefix("hatchet.*"), Expect::kError, "spec.nats.subjectPrefix", "'*'"},
    {"prefix gt", false, Prefix("hatchet.>"), Expect::kError, "spec.nats.subjectPrefix", "'>'"},
    {"prefix leading dot", false, Prefix(".hatchet"), Expect::kError, "spec.nats.subjectPrefix",
     "start with a dot"},
    {"prefix trailing dot", false, Prefix("hatchet."), Expect::kError, "spec.nats.subjectPrefix",
     "end with a dot"},
    {"prefix dollar", false, Prefix("$SYS.x"), Expect::kError, "spec.nats.subjectPrefix",
     "reserved"},
    {"prefix quote", false, Prefix("a\"b"), Expect::kError, "spec.nats.subjectPrefix", "'\"'"},
    {"prefix control char", false,
     Prefix(std::string("a\x01"
                        "b")),
     Expect::kError, "spec.nats.subjectPrefix", "U+0001 (a control character)"},
    // Invisible characters: errors that name the code point (issue: two
    // prefixes that differ only by one look identical in kubectl get psb).
    {"prefix line separator", false, Prefix("hatchet\u2028.a"), Expect::kError,
     "spec.nats.subjectPrefix", "U+2028 LINE SEPARATOR (character 8 of \"hatchet\\u2028.a\")"},
    {"prefix paragraph separator", false, Prefix("a\u2029"), Expect::kError,
     "spec.nats.subjectPrefix", "U+2029 PARAGRAPH SEPARATOR"},
    {"prefix zero width space", false, Prefix("hatchet.te\u200bam"), Expect::kError,
     "spec.nats.subjectPrefix", "U+200B ZERO WIDTH SPACE"},
    {"prefix zero width joiner", false, Prefix("a\u200d.b"), Expect::kError,
     "spec.nats.subjectPrefix", "U+200D ZERO WIDTH JOINER"},
    {"prefix rtl mark", false, Prefix("a\u200f"), Expect::kError, "spec.nats.subjectPrefix",
     "U+200F RIGHT-TO-LEFT MARK"},
    {"prefix word joiner", false, Prefix("a\u2060b"), Expect::kError, "spec.nats.subjectPrefix",
     "U+2060 WORD JOINER"},
    {"prefix invisible plus", false, Prefix("a\u2064b"), Expect::kError, "spec.nats.subjectPrefix",
     "U+2064 INVISIBLE PLUS"},
    {"prefix bom", false, Prefix("\ufeffhatchet"), Expect::kError, "spec.nats.subjectPrefix",
     "U+FEFF ZERO WIDTH NO-BREAK SPACE"},
    {"prefix soft hyphen", false, Prefix("hat\u00adchet"), Expect::kError,
     "spec.nats.subjectPrefix", "U+00AD SOFT HYPHEN"},
    {"prefix bidi override", false, Prefix("a\u202eb"), Expect::kError, "spec.nats.subjectPrefix",
     "U+202E RIGHT-TO-LEFT OVERRIDE"},
    {"prefix bidi isolate", false, Prefix("a\u2066b\u2069"), Expect::kError,
     "spec.nats.subjectPrefix", "U+2066 LEFT-TO-RIGHT ISOLATE"},
    {"prefix no-break space", false, Prefix("a\u00a0b"), Expect::kError, "spec.nats.subjectPrefix",
     "U+00A0 NO-BREAK SPACE"},
    {"prefix C1 control", false, Prefix("a\u0085b"), Expect::kError, "spec.nats.subjectPrefix",
     "U+0085 NEXT LINE"},
    {"prefix private use", false, Prefix("a\ue000b"), Expect::kError, "spec.nats.subjectPrefix",
     "U+E000 (a private-use character)"},
    {"prefix noncharacter", false, Prefix("a\ufdd0"), Expect::kError, "spec.nats.subjectPrefix",
     "U+FDD0 (a Unicode noncharacter)"},
    {"prefix variation selector", false, Prefix("a\ufe0f"), Expect::kError,
     "spec.nats.subjectPrefix", "U+FE0F (a character that renders as nothing)"},
    {"prefix tag character", false, Prefix("a\U000E0041"), Expect::kError,
     "spec.nats.subjectPrefix", "U+E0041 (an invisible format character)"},
    {"prefix invalid utf-8", false, Prefix(std::string("a\xff")), Expect::kError,
     "spec.nats.subjectPrefix", "byte 0xFF (not valid UTF-8)"},
    {"prefix visible non-ascii warns only", false, Prefix("caf\u00e9.team"), Expect::kWarning,
     "spec.nats.subjectPrefix", "outside [A-Za-z0-9_-]"},
    {"username zero width space", false,
     Set("/spec/nats/credentials/username", "team-a\u200b-hatchet"), Expect::kError,
     "spec.nats.credentials.username", "U+200B ZERO WIDTH SPACE (character 7 of"},
    {"username line separator", false, Set("/spec/nats/credentials/username", "u\u2028"),
     Expect::kError, "spec.nats.credentials.username", "U+2028 LINE SEPARATOR"},
    {"username bidi", false, Set("/spec/nats/credentials/username", "u\u202dx"), Expect::kError,
     "spec.nats.credentials.username", "U+202D LEFT-TO-RIGHT OVERRIDE"},
    {"prefix max length ok", false, Prefix(std::string(191, 'p')), Expect::kOk},
    {"prefix too long", false, Prefix(std::string(192, 'p')), Expect::kError,
     "spec.nats.subjectPrefix", "more than 191"},
    {"prefix 15 tokens ok", false, Prefix("a.b.c.d.e.f.g.h.i.j.k.l.m.n.o"), Expect::kOk},
    {"prefix 16 tokens warns", false, Prefix("a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p"), Expect::kWarning,
     "spec.nats.subjectPrefix", "at most 15"},
    {"prefix unusual chars warn", false, Prefix("hatchet/prod"), Expect::kWarning,
     "spec.nats.subjectPrefix", "[A-Za-z0-9_-]"},
    {"prefix single token", false, Prefix("hatchet"), Expect::kOk},
    // --- credentials
    {"username invalid", false, Set("/spec/nats/credentials/username", "a b"), Expect::kError,
     "spec.nats.credentials.username", "not a valid NATS user name"},
    {"username empty", false, Set("/spec/nats/credentials/username", ""), Expect::kError,
     "spec.nats.credentials.username", "1-200"},
    {"password ref without key (default password)", false,
     Set("/spec/nats/credentials/passwordSecretRef", {{"name", "pw"}}), Expect::kOk},
    {"password ref bad key", false,
     Set("/spec/nats/credentials/passwordSecretRef", {{"name", "pw"}, {"key", "a/b"}}),
     Expect::kError, "spec.nats.credentials.passwordSecretRef.key", "Secret data key"},
    {"password ref ok", false,
     Set("/spec/nats/credentials/passwordSecretRef", {{"name", "pw"}, {"key", "password"}}),
     Expect::kOk},
    {"grace period invalid", false, Set("/spec/nats/credentials/rotationGracePeriod", "10 minutes"),
     Expect::kError, "spec.nats.credentials.rotationGracePeriod", "not a duration"},
    {"grace period negative", false, Set("/spec/nats/credentials/rotationGracePeriod", "-1m"),
     Expect::kError, "spec.nats.credentials.rotationGracePeriod", "negative"},
    {"grace period zero warns", false, Set("/spec/nats/credentials/rotationGracePeriod", "0s"),
     Expect::kWarning, "spec.nats.credentials.rotationGracePeriod", "at once"},
    {"grace period compound", false, Set("/spec/nats/credentials/rotationGracePeriod", "1h30m"),
     Expect::kOk},
    // --- output and secret names
    {"output secret name invalid", false, Set("/spec/output/secretName", "Env"), Expect::kError,
     "spec.output.secretName", "lowercase"},
    {"output equals password secret", false,
     Then(Set("/spec/nats/credentials/passwordSecretRef", {{"name", "pw"}, {"key", "p"}}),
          Set("/spec/output/secretName", "pw")),
     Expect::kError, "spec.output.secretName", "passwordSecretRef"},
    {"output equals generated credentials", false,
     Set("/spec/output/secretName", "hatchet-nats-credentials"), Expect::kError,
     "spec.output.secretName", "generated password"},
    // --- rabbitmq
    {"rabbitmq valid", false, Rabbit(), Expect::kOk},
    {"rabbitmq inline url", false, Then(Rabbit(), Set("/spec/rabbitmq/url", "amqp://u:p@h/")),
     Expect::kError, "spec.rabbitmq.url", "urlSecretRef"},
    {"rabbitmq inline http url", false, Then(Rabbit(), Set("/spec/rabbitmq/url", "http://h/")),
     Expect::kError, "spec.rabbitmq.url", "must be amqp:// or amqps://"},
    {"rabbitmq url secret missing", false, Then(Rabbit(), Erase("/spec/rabbitmq", "urlSecretRef")),
     Expect::kError, "spec.rabbitmq.urlSecretRef", "required"},
    {"rabbitmq url secret without key (default url)", false,
     Then(Rabbit(), Erase("/spec/rabbitmq/urlSecretRef", "key")), Expect::kOk},
    {"username 200 chars", false, Set("/spec/nats/credentials/username", std::string(200, 'u')),
     Expect::kOk},
    {"username 201 chars", false, Set("/spec/nats/credentials/username", std::string(201, 'u')),
     Expect::kError, "spec.nats.credentials.username", "1-200"},
    {"username leading dot", false, Set("/spec/nats/credentials/username", ".u"), Expect::kError,
     "spec.nats.credentials.username", "starting with a letter"},
    {"payload exponent form rejected like the CRD", true, Payload("2e7"), Expect::kError,
     "spec.maxPayload", "not an accepted size"},
    {"payload Ti rejected like the CRD", true, Payload("1Ti"), Expect::kError, "spec.maxPayload",
     "not an accepted size"},
    {"rabbitmq pub chans zero", false, Then(Rabbit(), Set("/spec/rabbitmq/maxPubChans", 0)),
     Expect::kError, "spec.rabbitmq.maxPubChans", "at least 1"},
    {"rabbitmq sub chans negative", false, Then(Rabbit(), Set("/spec/rabbitmq/maxSubChans", -2)),
     Expect::kError, "spec.rabbitmq.maxSubChans", "must not be negative"},
    {"rabbitmq chans as string", false, Then(Rabbit(), Set("/spec/rabbitmq/maxSubChans", "20")),
     Expect::kError, "spec.rabbitmq.maxSubChans", "without quotes"},
    {"rabbitmq chans float", false, Then(Rabbit(), Set("/spec/rabbitmq/maxSubChans", 2.5)),
     Expect::kError, "spec.rabbitmq.maxSubChans", "whole number"},
    {"env equals rabbitmq url secret", false, Then(Rabbit(), Set("/spec/output/secretName", "rmq")),
     Expect::kError, "spec.output.secretName", "urlSecretRef"},
    // --- postgres
    {"postgres defaults", false, Postgres(json::object()), Expect::kOk},
    {"postgres min > max", false, Postgres({{"maxConns", 2}, {"minConns", 3}}), Expect::kError,
     "spec.postgres.minConns", "more than spec.postgres.maxConns (2)"},
    {"postgres min > default max", false, Postgres({{"minConns", 6}}), Expect::kError,
     "spec.postgres.minConns", "more than spec.postgres.maxConns (5)"},
    {"postgres min == max", false, Postgres({{"maxConns", 3}, {"minConns", 3}}), Expect::kOk},
    {"postgres max zero", false, Postgres({{"maxConns", 0}, {"minConns", 0}}), Expect::kError,
     "spec.postgres.maxConns", "at least 1"},
    {"postgres min negative", false, Postgres({{"minConns", -1}}), Expect::kError,
     "spec.postgres.minConns", "must not be negative"},
    {"postgres min zero", false, Postgres({{"minConns", 0}}), Expect::kOk},
    // --- numbers at the edges of int64 and of what a parser can produce
    // (a cast of 1e300 to int64 would be undefined behaviour).
    {"int field 1e300", false, Postgres({{"maxConns", 1e300}}), Expect::kError,
     "spec.postgres.maxConns", "fits in 64 bits"},
    {"int field -1e300", false, Postgres({{"minConns", -1e300}}), Expect::kError,
     "spec.postgres.minConns", "fits in 64 bits"},
    {"int field 2^63", false, Postgres({{"maxConns", 9223372036854775808.0}}), Expect::kError,
     "spec.postgres.maxConns", "fits in 64 bits"},
    {"int field uint64 max", false, Postgres({{"maxConns", 18446744073709551615ull}}),
     Expect::kError, "spec.postgres.maxConns", "at most 10000"},
    // The CRD's maximums (the API server enforces them; validate must agree).
    {"postgres max at limit", false, Postgres({{"maxConns", 10000}}), Expect::kOk},
    {"postgres max over limit", false, Postgres({{"maxConns", 10001}}), Expect::kError,
     "spec.postgres.maxConns", "at most 10000 (got 10001)"},
    {"postgres min over limit", false, Postgres({{"maxConns", 10000}, {"minConns", 10001}}),
     Expect::kError, "spec.postgres.minConns", "at most 10000"},
    {"rabbitmq chans at limit", false, Then(Rabbit(), Set("/spec/rabbitmq/maxPubChans", 65535)),
     Expect::kOk},
    {"rabbitmq chans over limit", false, Then(Rabbit(), Set("/spec/rabbitmq/maxSubChans", 65536)),
     Expect::kError, "spec.rabbitmq.maxSubChans", "at most 65535"},
    {"int field -2^63 is whole", false, Postgres({{"minConns", -9223372036854775808.0}}),
     Expect::kError, "spec.postgres.minConns", "must not be negative"},
    {"int field nan", false, Postgres({{"maxConns", std::nan("")}}), Expect::kError,
     "spec.postgres.maxConns", "whole number"},
    {"int field inf", false, Postgres({{"maxConns", HUGE_VAL}}), Expect::kError,
     "spec.postgres.maxConns", "whole number"},
    {"int field -inf", false, Postgres({{"minConns", -HUGE_VAL}}), Expect::kError,
     "spec.postgres.minConns", "whole number"},
    {"int field -0.0 is zero", false, Postgres({{"minConns", -0.0}}), Expect::kOk},
    {"int field 3.0 is three", false, Postgres({{"maxConns", 3.0}, {"minConns", 3}}), Expect::kOk},
    {"quantity 1e300", true, Payload(1e300), Expect::kError, "spec.maxPayload",
     "whole number of bytes"},
    {"quantity nan", true, Payload(std::nan("")), Expect::kError, "spec.maxPayload",
     "whole number of bytes"},
    // --- NATS URLs
    {"url at the CRD's maxLength", true, Url("nats://" + std::string(1024 - 12, 'n') + ":4222"),
     Expect::kOk},
    {"url over the CRD's maxLength", true, Url("nats://" + std::string(1024 - 11, 'n') + ":4222"),
     Expect::kError, "spec.url", "more than 1024"},
    {"allowed names at the CRD's maxItems", true,
     Then(Set("/spec/allowedNamespaces/from", "List"),
          [](json& o) {
            for (int i = 0; i < 256; ++i)
              o["spec"]["allowedNamespaces"]["names"].push_back("n" + std::to_string(i));
          }),
     Expect::kOk},
    {"allowed names over the CRD's maxItems", true,
     Then(Set("/spec/allowedNamespaces/from", "List"),
          [](json& o) {
            for (int i = 0; i < 257; ++i)
              o["spec"]["allowedNamespaces"]["names"].push_back("n" + std::to_string(i));
          }),
     Expect::kError, "spec.allowedNamespaces.names", "more than 256"},
    {"url single", true, Url("nats://nats:4222"), Expect::kOk},
    {"url tls and default port", true, Url("tls://nats.example.com"), Expect::kOk},
    {"url ipv6", true, Url("nats://[::1]:4222"), Expect::kOk},
    {"url spaces around seeds", true, Url("nats://a:4222, nats://b:4222"), Expect::kOk},
    {"url upper-case scheme", true, Url("NATS://a:4222"), Expect::kOk},
    {"url empty", true, Url(""), Expect::kError, "spec.url", "must not be empty"},
    {"url missing", true, Erase("/spec", "url"), Expect::kError, "spec.url", "required"},
    {"url no scheme", true, Url("nats-0:4222"), Expect::kError, "spec.url",
     "seed 1 \"nats-0:4222\" has no scheme; write nats://nats-0:4222"},
    {"url http scheme", true, Url("nats://a:4222,http://b:4222"), Expect::kError, "spec.url",
     "seed 2 \"http://b:4222\" has scheme \"http\"; use nats:// or tls://"},
    {"url websocket", true, Url("ws://a:8080"), Expect::kError, "spec.url", "websockets"},
    {"url no host", true, Url("nats://:4222"), Expect::kError, "spec.url", "no host"},
    {"url bad host", true, Url("nats://a b:4222"), Expect::kError, "spec.url", "invalid host"},
    {"url port zero", true, Url("nats://a:0"), Expect::kError, "spec.url", "outside 1-65535"},
    {"url port too big", true, Url("nats://a:65536"), Expect::kError, "spec.url",
     "outside 1-65535"},
    {"url port not a number", true, Url("nats://a:42x2"), Expect::kError, "spec.url",
     "invalid port"},
    {"url empty port", true, Url("nats://a:"), Expect::kError, "spec.url", "empty port"},
    {"url path", true, Url("nats://a:4222/x"), Expect::kError, "spec.url", "has a path"},
    {"url query", true, Url("nats://a:4222?x=1"), Expect::kError, "spec.url", "query or fragment"},
    {"url trailing slash", true, Url("nats://a:4222/"), Expect::kError, "spec.url",
     "ends with '/'"},
    {"url host label with leading dash", true, Url("nats://-a.b:4222"), Expect::kError, "spec.url",
     "invalid host"},
    {"url host with underscore inside", true, Url("nats://a_b.svc:4222"), Expect::kOk},
    {"url at sign anywhere", true, Url("nats://a:4222/@x"), Expect::kError, "spec.url",
     "embeds credentials"},
    {"server name over 240", true, Set("/metadata/name", std::string(241, 'a')), Expect::kError,
     "metadata.name", "at most 240"},
    {"server name 240", true, Set("/metadata/name", std::string(240, 'a')), Expect::kOk},
    {"server name over 240 names the callout Secret", true,
     Set("/metadata/name", std::string(241, 'a')), Expect::kError, "metadata.name",
     "<name>-auth-callout"},
    {"server name over 234 with the usage system user", true,
     Then(Set("/metadata/name", std::string(235, 'a')), Set("/spec/usage/systemUser", true)),
     Expect::kError, "metadata.name", "<name>-switchboard-system"},
    {"server name 234 with the usage system user", true,
     Then(Set("/metadata/name", std::string(234, 'a')), Set("/spec/usage/systemUser", true)),
     Expect::kOk},
    {"server name 240 without the usage system user", true,
     Then(Set("/metadata/name", std::string(240, 'a')), Set("/spec/usage/systemUser", false)),
     Expect::kOk},
    {"config Secret is the usage system user's Secret", true,
     Then(Set("/spec/config/secretName", "shared-switchboard-system"),
          Set("/spec/usage/systemUser", true)),
     Expect::kError, "spec.config.secretName", "usage system user's Secret"},
    {"usage system user on", true, Set("/spec/usage/systemUser", true), Expect::kOk},
    {"usage system user not a boolean", true, Set("/spec/usage/systemUser", "yes"), Expect::kError,
     "spec.usage.systemUser", "true or false"},
    {"usage unknown field", true, Set("/spec/usage/systemUsr", true), Expect::kError,
     "spec.usage.systemUsr", "did you mean \"systemUser\"?"},
    {"config Secret named like the system Secret without the system user", true,
     Set("/spec/config/secretName", "shared-switchboard-system"), Expect::kOk},
    {"allowed names empty without List", true, Set("/spec/allowedNamespaces/names", json::array()),
     Expect::kError, "spec.allowedNamespaces.names", "from: List"},
    {"url credentials", true, Url("nats://user:hunter2@a:4222"), Expect::kError, "spec.url",
     "spec.nats.credentials"},
    {"url token", true, Url("nats://s3cr3t@a:4222"), Expect::kError, "spec.url",
     "embeds credentials"},
    {"url empty seed", true, Url("nats://a:4222,,nats://b:4222"), Expect::kError, "spec.url",
     "seed 2 is empty"},
    {"url trailing comma", true, Url("nats://a:4222,"), Expect::kError, "spec.url",
     "seed 2 is empty"},
    {"url duplicate seed", true, Url("nats://a:4222,nats://A"), Expect::kWarning, "spec.url",
     "repeats"},
    {"url unclosed ipv6", true, Url("nats://[::1:4222"), Expect::kError, "spec.url", "unclosed"},
    // --- payload
    {"payload 16Mi", true, Payload("16Mi"), Expect::kOk},
    {"payload bytes", true, Payload(16777216), Expect::kOk},
    {"payload below 16Mi", true, Payload("8Mi"), Expect::kError, "spec.maxPayload", "below 16Mi"},
    {"payload 1 byte under", true, Payload(16777215), Expect::kError, "spec.maxPayload",
     "below 16Mi"},
    {"payload decimal 16M is below 16Mi", true, Payload("16M"), Expect::kError, "spec.maxPayload",
     "below 16Mi"},
    {"payload above 16Mi warns", true, Payload("32Mi"), Expect::kWarning, "spec.maxPayload",
     "above 16Mi"},
    {"payload 64Mi warns only", true, Payload("64Mi"), Expect::kWarning, "spec.maxPayload",
     "above 16Mi"},
    {"payload above 64Mi", true, Payload("65Mi"), Expect::kError, "spec.maxPayload", "64Mi"},
    {"payload unparsable", true, Payload("lots"), Expect::kError, "spec.maxPayload",
     "not an accepted size"},
    {"payload fraction", true, Payload("16.5Mi"), Expect::kWarning, "spec.maxPayload",
     "above 16Mi"},
    {"payload boolean", true, Payload(true), Expect::kError, "spec.maxPayload",
     "integer or a quantity"},
    {"payload above pending", true, Then(Payload("32Mi"), Set("/spec/maxPending", "24Mi")),
     Expect::kError, "spec.maxPayload", "max_pending"},
    {"pending above 64Mi", true, Set("/spec/maxPending", "128Mi"), Expect::kError,
     "spec.maxPending", "at most 64Mi"},
    {"pending equals payload", true, Set("/spec/maxPending", "16Mi"), Expect::kOk},
    // --- server fields
    {"isolation unknown", true, Set("/spec/isolation", "Users"), Expect::kError, "spec.isolation",
     "Permissions or Accounts"},
    {"isolation accounts", true, Set("/spec/isolation", "Accounts"), Expect::kOk},
    // --- provisioning
    {"provisioning include file", true, Set("/spec/provisioning/mode", "IncludeFile"), Expect::kOk},
    {"provisioning auth callout", true, Set("/spec/provisioning/mode", "AuthCallout"), Expect::kOk},
    {"provisioning auth callout with block", true,
     Set("/spec/provisioning",
         {{"mode", "AuthCallout"},
          {"authCallout", {{"account", "TENANTS_1"}, {"secretName", "shared-keys"}}}}),
     Expect::kOk},
    {"provisioning mode unknown", true, Set("/spec/provisioning/mode", "Callout"), Expect::kError,
     "spec.provisioning.mode", "IncludeFile or AuthCallout"},
    {"provisioning mode wrong case", true, Set("/spec/provisioning/mode", "authCallout"),
     Expect::kError, "spec.provisioning.mode", "IncludeFile or AuthCallout"},
    {"provisioning mode not a string", true, Set("/spec/provisioning/mode", 1), Expect::kError,
     "spec.provisioning.mode", "must be a string"},
    {"provisioning not an object", true, Set("/spec/provisioning", "AuthCallout"), Expect::kError,
     "spec.provisioning", "must be an object"},
    {"provisioning unknown field", true, Set("/spec/provisioning/authcallout", json::object()),
     Expect::kError, "spec.provisioning.authcallout", "did you mean \"authCallout\""},
    {"authCallout without the mode", true,
     Set("/spec/provisioning/authCallout", {{"account", "HATCHET"}}), Expect::kError,
     "spec.provisioning.authCallout", "set spec.provisioning.mode: AuthCallout or remove"},
    {"authCallout with IncludeFile", true,
     Set("/spec/provisioning", {{"mode", "IncludeFile"}, {"authCallout", json::object()}}),
     Expect::kError, "spec.provisioning.authCallout", "only used with mode: AuthCallout"},
    {"accounts with auth callout (operator mode)", true,
     Then(Set("/spec/isolation", "Accounts"), Set("/spec/provisioning/mode", "AuthCallout")),
     Expect::kOk},
    {"resolver dir absolute", true,
     Then(Set("/spec/provisioning/mode", "AuthCallout"),
          Set("/spec/provisioning/authCallout/resolverDir", "/data/jwt")),
     Expect::kOk},
    {"resolver dir relative", true,
     Then(Set("/spec/provisioning/mode", "AuthCallout"),
          Set("/spec/provisioning/authCallout/resolverDir", "data/../jwt")),
     Expect::kError, "spec.provisioning.authCallout.resolverDir", "use e.g. /data/resolver"},
    {"accounts with include file", true,
     Then(Set("/spec/isolation", "Accounts"), Set("/spec/provisioning/mode", "IncludeFile")),
     Expect::kOk},
    {"callout account 64", true,
     Then(Set("/spec/provisioning/mode", "AuthCallout"),
          Set("/spec/provisioning/authCallout/account", std::string(64, 'A'))),
     Expect::kOk},
    {"callout account over 64", true,
     Then(Set("/spec/provisioning/mode", "AuthCallout"),
          Set("/spec/provisioning/authCallout/account", std::string(65, 'A'))),
     Expect::kError, "spec.provisioning.authCallout.account", "at most 64"},
    {"callout account empty", true,
     Then(Set("/spec/provisioning/mode", "AuthCallout"),
          Set("/spec/provisioning/authCallout/account", "")),
     Expect::kError, "spec.provisioning.authCallout.account", "must not be empty"},
    {"callout account with a dot", true,
     Then(Set("/spec/provisioning/mode", "AuthCallout"),
          Set("/spec/provisioning/authCallout/account", "a.b")),
     Expect::kError, "spec.provisioning.authCallout.account", "NATS account name"},
    {"callout account SWITCHBOARD_AUTH", true,
     Then(Set("/spec/provisioning/mode", "AuthCallout"),
          Set("/spec/provisioning/authCallout/account", "SWITCHBOARD_AUTH")),
     Expect::kError, "spec.provisioning.authCallout.account", "authorizer's own user"},
    {"callout account SYS", true,
     Then(Set("/spec/provisioning/mode", "AuthCallout"),
          Set("/spec/provisioning/authCallout/account", "SYS")),
     Expect::kError, "spec.provisioning.authCallout.account", "system account"},
    {"callout account $G", true,
     Then(Set("/spec/provisioning/mode", "AuthCallout"),
          Set("/spec/provisioning/authCallout/account", "$G")),
     Expect::kError, "spec.provisioning.authCallout.account", "global account"},
    {"callout secret invalid", true,
     Then(Set("/spec/provisioning/mode", "AuthCallout"),
          Set("/spec/provisioning/authCallout/secretName", "Keys")),
     Expect::kError, "spec.provisioning.authCallout.secretName", "lowercase"},
    {"callout secret is the config secret", true,
     Then(Set("/spec/provisioning/mode", "AuthCallout"),
          Set("/spec/provisioning/authCallout/secretName", "shared-switchboard")),
     Expect::kError, "spec.provisioning.authCallout.secretName", "spec.config.secretName"},
    {"config secret invalid", true, Set("/spec/config/secretName", "A"), Expect::kError,
     "spec.config.secretName", "lowercase"},
    {"config key invalid", true, Set("/spec/config/key", "a b"), Expect::kError, "spec.config.key",
     "Secret data key"},
    {"ca ref without name", true, Set("/spec/tls/caSecretRef", {{"key", "ca.crt"}}), Expect::kError,
     "spec.tls.caSecretRef.name", "required"},
    {"allowed from unknown", true, Set("/spec/allowedNamespaces/from", "Some"), Expect::kError,
     "spec.allowedNamespaces.from", "Same, All or List"},
    {"allowed names without List", true, Set("/spec/allowedNamespaces/names", {"a"}),
     Expect::kError, "spec.allowedNamespaces.names", "from: List"},
    {"allowed List without names", true, Set("/spec/allowedNamespaces/from", "List"),
     Expect::kError, "spec.allowedNamespaces.names", "required"},
    {"allowed name invalid", true,
     Set("/spec/allowedNamespaces", {{"from", "List"}, {"names", {"ok", "Bad"}}}), Expect::kError,
     "spec.allowedNamespaces.names[1]", "lowercase"},
    {"allowed name not string", true,
     Set("/spec/allowedNamespaces", {{"from", "List"}, {"names", {"ok", 1}}}), Expect::kError,
     "spec.allowedNamespaces.names[1]", "must be a string"},
    {"allowed name duplicate", true,
     Set("/spec/allowedNamespaces", {{"from", "List"}, {"names", {"a", "a"}}}), Expect::kWarning,
     "spec.allowedNamespaces.names[1]", "twice"},
};

class RuleTable : public ::testing::TestWithParam<Case> {};

TEST_P(RuleTable, Finding) {
  const Case& c = GetParam();
  json object = c.server ? Server() : Backend();
  c.mutate(object);
  Context ctx;
  ctx.servers.push_back(Server());  // so a backend's serverRef resolves
  Report r = Validate(object, ctx);
  switch (c.expect) {
    case Expect::kOk:
      EXPECT_TRUE(r.errors.empty() && r.warnings.empty()) << Dump(r);
      return;
    case Expect::kError:
    case Expect::kWarning: {
      const auto& list = c.expect == Expect::kError ? r.errors : r.warnings;
      bool found = false;
      for (const auto& f : list) {
        found |= f.field == c.field && f.message.find(c.contains) != std::string::npos;
        EXPECT_FALSE(f.rule.empty()) << f.ToString();
      }
      EXPECT_TRUE(found) << "want " << (c.expect == Expect::kError ? "error" : "warning") << " "
                         << c.field << ": ..." << c.contains << "...\ngot:\n"
                         << Dump(r);
      if (c.expect == Expect::kWarning) {
        EXPECT_TRUE(r.errors.empty()) << Dump(r);
      }
    }
  }
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string n;
  for (const char* p = info.param.name; *p; ++p)
    n += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(All, RuleTable, ::testing::ValuesIn(kCases), CaseName);

TEST(Rules, NeverThrowsOnOddShapes) {
  const json odd[] = {
      nullptr,
      1,
      "x",
      json::array(),
      json::object(),
      {{"kind", "PubSubBackend"}, {"spec", json::array()}},
      {{"kind", "PubSubBackend"}, {"metadata", 3}, {"spec", {{"kind", "nats"}, {"nats", 1}}}},
      {{"kind", "NatsServer"}, {"spec", {{"url", 1}, {"allowedNamespaces", "x"}}}},
      {{"kind", "PubSubBackend"},
       {"spec", {{"kind", "nats"}, {"nats", {{"serverRef", "x"}, {"credentials", 2}}}}}}};
  for (const auto& o : odd) {
    Report r = Validate(o, Context{});
    EXPECT_FALSE(r.ok()) << o.dump();
    (void)DefaultedCopy(o);
    (void)DefaultingPatch(o);
  }
}

TEST(Rules, CredentialsInUrlAreNeverEchoed) {
  json s = Server();
  s["spec"]["url"] = "nats://admin:hunter2@nats:4222";
  Report r = Validate(s, Context{});
  ASSERT_FALSE(r.ok());
  for (const auto& f : r.errors)
    EXPECT_EQ(f.message.find("hunter2"), std::string::npos) << f.message;
}

TEST(Rules, IsSwitchboardObject) {
  EXPECT_TRUE(IsSwitchboardObject(Backend()));
  EXPECT_TRUE(IsSwitchboardObject(Server()));
  EXPECT_TRUE(
      IsSwitchboardObject({{"apiVersion", "pubsub.switchboard.dev/v1alpha1"}, {"kind", "Other"}}));
  EXPECT_FALSE(IsSwitchboardObject({{"apiVersion", "v1"}, {"kind", "ConfigMap"}}));
  EXPECT_FALSE(IsSwitchboardObject({{"apiVersion", "nats.io/v1"}, {"kind", "NatsServer"}}));
  EXPECT_FALSE(IsSwitchboardObject(json::array()));
}

}  // namespace
}  // namespace switchboard::rules
