// The CRDs and the rules carry the same numbers: every maxLength,
// minLength, minimum, maximum and maxItems in crds/*.yaml, and the numbers
// in their CEL rules, equal the api/limits.h constant the rules use. A
// number in a CRD that no row here names fails the test, so a new bound
// cannot be added to the YAML alone.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <string_view>

#include "switchboard/api/constants.h"
#include "switchboard/api/documents.h"
#include "switchboard/api/limits.h"
#include "switchboard/api/names.h"
#include "switchboard/api/quantity.h"
#include "switchboard/api/usage.h"

namespace switchboard::api {
namespace {

using nlohmann::json;

std::string SourceDir() {
  const char* dir = std::getenv("SWITCHBOARD_SOURCE_DIR");
  return dir != nullptr ? dir : SWITCHBOARD_SOURCE_DIR_DEFAULT;
}

json LoadCrd(const std::string& file) {
  auto text = ReadFileText(SourceDir() + "/crds/" + file);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  if (!text.ok()) return json();
  auto docs = LoadDocuments(*text);
  EXPECT_TRUE(docs.status.ok()) << docs.status.ToString();
  EXPECT_EQ(docs.documents.size(), 1u);
  return docs.documents.empty() ? json() : docs.documents[0].value;
}

// "path keyword" -> value, for every bound in the schema ("." is the root,
// "[]" an array's items).
using Bounds = std::map<std::string, int64_t>;
// path -> the CEL rules there.
using Rules = std::multimap<std::string, std::string>;

void Walk(const json& node, const std::string& path, Bounds& bounds, Rules& rules) {
  if (!node.is_object()) return;
  const std::string at = path.empty() ? "." : path;
  for (const char* k : {"maxLength", "minLength", "minimum", "maximum", "maxItems", "minItems",
                        "maxProperties", "minProperties", "exclusiveMinimum", "exclusiveMaximum"}) {
    if (auto it = node.find(k); it != node.end()) bounds[at + " " + k] = it->get<int64_t>();
  }
  if (auto v = node.find("x-kubernetes-validations"); v != node.end()) {
    for (const auto& r : *v) rules.emplace(at, r.at("rule").get<std::string>());
  }
  if (auto p = node.find("properties"); p != node.end()) {
    for (auto it = p->begin(); it != p->end(); ++it) {
      Walk(it.value(), path.empty() ? it.key() : path + "." + it.key(), bounds, rules);
    }
  }
  if (auto items = node.find("items"); items != node.end()) {
    Walk(*items, path + "[]", bounds, rules);
  }
}

void Collect(const json& crd, Bounds& bounds, Rules& rules) {
  const auto& versions = crd.at("spec").at("versions");
  ASSERT_EQ(versions.size(), 1u) << "a second version needs its own rows";
  Walk(versions[0].at("schema").at("openAPIV3Schema"), "", bounds, rules);
}

int64_t I(size_t v) { return static_cast<int64_t>(v); }

const Bounds kConditionBounds = {
    {"status.conditions[].type maxLength", I(kMaxConditionTypeLength)},
    {"status.conditions[].reason maxLength", I(kMaxConditionReasonLength)},
    {"status.conditions[].message maxLength", I(kMaxConditionMessageLength)},
};

void ExpectBounds(const Bounds& got, Bounds want) {
  want.insert(kConditionBounds.begin(), kConditionBounds.end());
  for (const auto& [key, value] : got) {
    auto it = want.find(key);
    if (it == want.end()) {
      ADD_FAILURE() << "the CRD has " << key << ": " << value
                    << " and no api/limits.h constant is named for it here";
      continue;
    }
    EXPECT_EQ(value, it->second) << key;
  }
  for (const auto& [key, value] : want) {
    EXPECT_TRUE(got.count(key)) << "expected " << key << ": " << value << " in the CRD";
  }
}

// The numbers and quantity strings of a CEL rule that is not a regular
// expression (those are checked by what they match), but 0: compareTo()
// and size() compare with 0 whatever the limits.
std::multiset<std::string> Numbers(const std::string& rule) {
  std::multiset<std::string> out;
  static const std::regex kNumber(R"((?:quantity\('([^']*)'\))|\b([0-9]+)\b)");
  for (auto it = std::sregex_iterator(rule.begin(), rule.end(), kNumber);
       it != std::sregex_iterator(); ++it) {
    std::string v = (*it)[1].matched ? (*it)[1].str() : (*it)[2].str();
    if (v != "0") out.insert(v);
  }
  return out;
}

std::string S(int64_t v) { return std::to_string(v); }

// The numbers of a maxPayload rule (api::CheckMaxPayload's bounds), as
// bytes and as quantities.
std::multiset<std::string> PayloadBounds() {
  return {S(kEngineMaxPayload), S(kNatsMaxPayloadLimit), FormatBytes(kEngineMaxPayload),
          FormatBytes(kNatsMaxPayloadLimit)};
}

// path -> the numbers its CEL rules hold (several rules at one path pool
// theirs).
void ExpectCelNumbers(const Rules& rules,
                      const std::map<std::string, std::multiset<std::string>>& want) {
  std::map<std::string, std::multiset<std::string>> got;
  for (const auto& [path, rule] : rules) {
    if (rule.find("matches(") != std::string::npos) continue;
    for (auto& n : Numbers(rule)) got[path].insert(n);
  }
  for (const auto& [path, numbers] : got) {
    if (numbers.empty()) continue;
    auto it = want.find(path);
    ASSERT_NE(it, want.end()) << "CEL rule numbers at " << path << " have no row here";
    EXPECT_EQ(numbers, it->second) << path;
  }
  for (const auto& [path, numbers] : want) EXPECT_TRUE(got.count(path)) << path;
}

TEST(CrdLimits, PubSubBackendBoundsAreTheRulesConstants) {
  Bounds bounds;
  Rules rules;
  Collect(LoadCrd("pubsub.switchboard.dev_pubsubbackends.yaml"), bounds, rules);
  ExpectBounds(
      bounds,
      {
          {"spec.nats.serverRef.name minLength", 1},
          {"spec.nats.serverRef.name maxLength", I(kMaxDnsSubdomainLength)},
          {"spec.nats.serverRef.namespace maxLength", I(kMaxDnsLabelLength)},
          {"spec.nats.subjectPrefix minLength", 1},
          {"spec.nats.subjectPrefix maxLength", I(kMaxSubjectPrefixLength)},
          {"spec.nats.credentials.username minLength", 1},
          {"spec.nats.credentials.username maxLength", I(kMaxUsernameLength)},
          {"spec.nats.credentials.passwordSecretRef.name minLength", 1},
          {"spec.nats.credentials.passwordSecretRef.name maxLength", I(kMaxDnsSubdomainLength)},
          {"spec.nats.credentials.passwordSecretRef.key maxLength", I(kMaxSecretKeyLength)},
          {"spec.rabbitmq.urlSecretRef.name minLength", 1},
          {"spec.rabbitmq.urlSecretRef.name maxLength", I(kMaxDnsSubdomainLength)},
          {"spec.rabbitmq.urlSecretRef.key maxLength", I(kMaxSecretKeyLength)},
          {"spec.rabbitmq.maxPubChans minimum", kMinRabbitmqChans},
          {"spec.rabbitmq.maxPubChans maximum", kMaxRabbitmqChans},
          {"spec.rabbitmq.maxSubChans minimum", kMinRabbitmqChans},
          {"spec.rabbitmq.maxSubChans maximum", kMaxRabbitmqChans},
          {"spec.postgres.maxConns minimum", kMinPostgresMaxConns},
          {"spec.postgres.maxConns maximum", kMaxPostgresConns},
          {"spec.postgres.minConns minimum", kMinPostgresMinConns},
          {"spec.postgres.minConns maximum", kMaxPostgresConns},
          {"spec.output.secretName maxLength", I(kMaxDnsSubdomainLength)},
          {"spec.nats.limits.maxConnections minimum", kMinInstallationConnections},
          {"spec.nats.limits.maxConnections maximum", kMaxInstallationConnections},
          {"spec.nats.limits.maxSubscriptions minimum", kMinInstallationSubscriptions},
          {"spec.nats.limits.maxSubscriptions maximum", kMaxInstallationSubscriptions},
      });
  ExpectCelNumbers(rules, {{".", {S(I(kMaxBackendNameLength))}},
                           {"spec.nats.limits.maxPayload", PayloadBounds()}});
}

TEST(CrdLimits, NatsServerBoundsAreTheRulesConstants) {
  Bounds bounds;
  Rules rules;
  Collect(LoadCrd("pubsub.switchboard.dev_natsservers.yaml"), bounds, rules);
  ExpectBounds(
      bounds,
      {
          {"spec.url minLength", 1},
          {"spec.url maxLength", I(kMaxNatsUrlLength)},
          {"spec.config.secretName maxLength", I(kMaxDnsSubdomainLength)},
          {"spec.config.key maxLength", I(kMaxSecretKeyLength)},
          {"spec.tls.caSecretRef.name minLength", 1},
          {"spec.tls.caSecretRef.name maxLength", I(kMaxDnsSubdomainLength)},
          {"spec.tls.caSecretRef.key maxLength", I(kMaxSecretKeyLength)},
          {"spec.allowedNamespaces.names maxItems", I(kMaxAllowedNamespaces)},
          {"spec.allowedNamespaces.names[] maxLength", I(kMaxDnsLabelLength)},
          {"spec.provisioning.authCallout.account minLength", 1},
          {"spec.provisioning.authCallout.account maxLength", I(kMaxCalloutAccountLength)},
          {"spec.provisioning.authCallout.secretName maxLength", I(kMaxDnsSubdomainLength)},
          {"spec.installationLimits.maxConnections minimum", kMinInstallationConnections},
          {"spec.installationLimits.maxConnections maximum", kMaxInstallationConnections},
          {"spec.installationLimits.maxSubscriptions minimum", kMinInstallationSubscriptions},
          {"spec.installationLimits.maxSubscriptions maximum", kMaxInstallationSubscriptions},
      });
  ExpectCelNumbers(rules,
                   {
                       {".", {S(I(kMaxServerNameLength)), S(I(kMaxUsageSystemServerNameLength))}},
                       {"spec.maxPayload", PayloadBounds()},
                       {"spec.installationLimits.maxPayload", PayloadBounds()},
                   });
}

json SchemaAt(const json& crd, std::initializer_list<const char*> path) {
  json node = crd.at("spec").at("versions")[0].at("schema").at("openAPIV3Schema");
  for (const char* p : path) node = node.at("properties").at(p);
  return node;
}

// The account's bounds also live in its pattern: judged by what it matches,
// and the names its CEL rule refuses are the api/ constants.
TEST(CrdLimits, CalloutAccountPatternAndReservedNames) {
  json crd = LoadCrd("pubsub.switchboard.dev_natsservers.yaml");
  json account = SchemaAt(crd, {"spec", "provisioning", "authCallout", "account"});
  EXPECT_EQ(account.at("default"), std::string(kDefaultCalloutAccount));
  std::regex re(account.at("pattern").get<std::string>());
  for (const std::string& ok : {std::string("HATCHET"), std::string("a"), std::string("A_b-9"),
                                std::string(kMaxCalloutAccountLength, 'A')}) {
    EXPECT_TRUE(std::regex_match(ok, re)) << ok;
    EXPECT_EQ(CheckCalloutAccount(ok), "") << ok;
  }
  for (const std::string& bad : {std::string(""), std::string(kMaxCalloutAccountLength + 1, 'A'),
                                 std::string("a.b"), std::string("a b"), std::string("$SYS"),
                                 std::string(kNatsGlobalAccount), std::string("a>")}) {
    EXPECT_FALSE(std::regex_match(bad, re)) << bad;
    EXPECT_NE(CheckCalloutAccount(bad), "") << bad;
  }
  ASSERT_EQ(account.at("x-kubernetes-validations").size(), 1u);
  std::string rule = account["x-kubernetes-validations"][0].at("rule");
  for (std::string_view reserved :
       {kCalloutAuthAccount, kCalloutSystemAccount, kNatsGlobalAccount}) {
    EXPECT_NE(rule.find("'" + std::string(reserved) + "'"), std::string::npos) << rule;
    EXPECT_NE(CheckCalloutAccount(reserved), "") << reserved;
  }
  // The enum and default of the mode are the api/ constants.
  json mode = SchemaAt(crd, {"spec", "provisioning", "mode"});
  EXPECT_EQ(mode.at("default"), std::string(kDefaultProvisioning));
  EXPECT_EQ(mode.at("enum"),
            json({std::string(kProvisioningIncludeFile), std::string(kProvisioningAuthCallout)}));
}

// The port bound lives in a CEL regular expression: judged by what it
// matches, with the same regex syntax subset std::regex reads.
TEST(CrdLimits, UrlRuleAcceptsPortsUpToTheRulesMaximum) {
  Bounds bounds;
  Rules rules;
  Collect(LoadCrd("pubsub.switchboard.dev_natsservers.yaml"), bounds, rules);
  std::string pattern;
  for (auto [it, end] = rules.equal_range("spec.url"); it != end; ++it) {
    if (it->second.find("6553") != std::string::npos) {
      const std::string& r = it->second;
      size_t open = r.find("r'"), close = r.rfind("')");
      ASSERT_NE(open, std::string::npos);
      pattern = r.substr(open + 2, close - open - 2);
    }
  }
  ASSERT_FALSE(pattern.empty()) << "no port rule on spec.url";
  std::regex re(pattern);
  for (int port : {1, 9, 10, 4222, 9999, 10000, 59999, 65499, 65529, kMaxPort}) {
    EXPECT_TRUE(std::regex_match("nats://h:" + std::to_string(port), re)) << port;
  }
  for (int port : {0, kMaxPort + 1, 65540, 70000, 99999}) {
    EXPECT_FALSE(std::regex_match("nats://h:" + std::to_string(port), re)) << port;
  }
}

}  // namespace
}  // namespace switchboard::api
