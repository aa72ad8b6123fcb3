// The admission decision, table-driven: AdmissionReview in, expected
// allowed / status / warnings / patch out. Pure: no server involved.
#include "switchboard/webhook_admission/admission.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "switchboard/testing/objects.h"

namespace switchboard::webhook_admission {
namespace {

using nlohmann::json;
using testing::AdmissionReviewOf;

json Backend(const std::string& ns, const std::string& name, json nats) {
  return testing::BackendBuilder(ns, name).Nats(std::move(nats));
}

json SharedServer() {
  return testing::ServerBuilder("team-a", "shared")
      .Url("nats://nats.team-a.svc:4222")
      .MaxPayload(16777216)
      .AllowSame();
}

json NatsBlock(const std::string& prefix) {
  return {{"serverRef", {{"name", "shared"}}}, {"subjectPrefix", prefix}};
}

json Decode(const std::string& b64) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned v = 0;
  int bits = 0;
  for (char c : b64) {
    if (c == '=') break;
    v = (v << 6) | static_cast<unsigned>(kAlphabet.find(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((v >> bits) & 0xff);
    }
  }
  return json::parse(out);
}

struct Case {
  std::string name;
  Webhook webhook;
  json review;
  rules::Context context;
  bool allowed;
  std::string message_has;  // substring of response.status.message ("" = none expected)
  std::string warning_has;  // substring of some warning ("" = no warnings expected)
};

class AdmissionTable : public ::testing::TestWithParam<Case> {};

TEST_P(AdmissionTable, Decides) {
  const Case& c = GetParam();
  StaticContextSource source(c.context);
  Outcome out = Review(c.review.dump(), c.webhook, source);
  ASSERT_EQ(out.http_status, 200) << out.body;
  json review = json::parse(out.body);
  EXPECT_EQ(review["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(review["kind"], "AdmissionReview");
  const json& response = review["response"];
  EXPECT_EQ(response["uid"], c.review["request"]["uid"]) << "uid must be echoed";
  EXPECT_EQ(response["allowed"], c.allowed) << out.body;
  EXPECT_EQ(out.result, c.allowed ? "allowed" : (out.result == "error" ? "error" : "denied"));
  if (c.message_has.empty()) {
    EXPECT_FALSE(response.contains("status")) << out.body;
  } else {
    ASSERT_TRUE(response.contains("status")) << out.body;
    EXPECT_NE(response["status"]["message"].get<std::string>().find(c.message_has),
              std::string::npos)
        << response["status"]["message"];
    EXPECT_EQ(out.message, response["status"]["message"]);
  }
  if (c.warning_has.empty()) {
    EXPECT_FALSE(response.contains("warnings")) << out.body;
  } else {
    ASSERT_TRUE(response.contains("warnings")) << out.body;
    bool found = false;
    for (const auto& w : response["warnings"]) {
      found |= w.get<std::string>().find(c.warning_has) != std::string::npos;
    }
    EXPECT_TRUE(found) << response["warnings"];
  }
}

std::vector<Case> Cases() {
  json good = Backend("team-a", "hatchet", NatsBlock("hatchet.team-a"));
  json other = Backend("team-a", "other", NatsBlock("hatchet.team-a"));
  // As the cache has it: stored, so older than the object of any CREATE.
  other["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z";
  json renamed = Backend("team-a", "hatchet", NatsBlock("hatchet.team-b"));
  json deployment = {{"apiVersion", "apps/v1"},
                     {"kind", "Deployment"},
                     {"metadata", {{"namespace", "team-a"}, {"name", "x"}}}};
  json wrong_kind = AdmissionReviewOf(deployment);
  wrong_kind["request"]["kind"] = {{"group", "apps"}, {"version", "v1"}, {"kind", "Deployment"}};
  json status_update = AdmissionReviewOf(good, "UPDATE", good);
  status_update["request"]["subResource"] = "status";
  status_update["request"]["object"]["spec"]["nats"]["subjectPrefix"] = "bad..prefix";
  json no_object = AdmissionReviewOf(good);
  no_object["request"].erase("object");
  json bad_operation = AdmissionReviewOf(good);
  bad_operation["request"]["operation"] = "PATCH";

  return {
      {"valid_backend",
       Webhook::kValidating,
       AdmissionReviewOf(good),
       {{}, {SharedServer()}},
       true,
       "",
       ""},
      {"empty_token_in_prefix",
       Webhook::kValidating,
       AdmissionReviewOf(Backend("team-a", "hatchet", NatsBlock("hatchet..prod"))),
       {{}, {SharedServer()}},
       false,
       "spec.nats.subjectPrefix",
       ""},
      {"duplicate_prefix_on_server",
       Webhook::kValidating,
       AdmissionReviewOf(good),
       {{other}, {SharedServer()}},
       false,
       "spec.nats.subjectPrefix",
       ""},
      {"itself_in_cache_is_not_a_duplicate",
       Webhook::kValidating,
       AdmissionReviewOf(good, "UPDATE", good),
       {{good}, {SharedServer()}},
       true,
       "",
       ""},
      {"prefix_change_warns",
       Webhook::kValidating,
       AdmissionReviewOf(renamed, "UPDATE", good),
       {{good}, {SharedServer()}},
       true,
       "",
       "subjectPrefix"},
      {"mutating_denies_what_the_rules_reject",
       Webhook::kMutating,
       AdmissionReviewOf(Backend("team-a", "hatchet", NatsBlock("hatchet..prod"))),
       {{}, {SharedServer()}},
       false,
       "spec.nats.subjectPrefix",
       ""},
      {"denial_carries_the_warnings_too",
       Webhook::kValidating,
       AdmissionReviewOf(Backend("team-a", "hatchet", NatsBlock("hatchet..b")), "UPDATE", good),
       {{good}, {SharedServer()}},
       false,
       "spec.nats.subjectPrefix",
       "subjectPrefix"},
      {"mutating_denial_carries_the_warnings_too",
       Webhook::kMutating,
       AdmissionReviewOf(Backend("team-a", "hatchet", NatsBlock("hatchet..b")), "UPDATE", good),
       {{good}, {SharedServer()}},
       false,
       "spec.nats.subjectPrefix",
       "subjectPrefix"},
      {"mutating_gives_no_warnings",
       Webhook::kMutating,
       AdmissionReviewOf(renamed, "UPDATE", good),
       {{good}, {SharedServer()}},
       true,
       "",
       ""},
      {"wrong_kind", Webhook::kValidating, wrong_kind, {}, false, "fix the rules", ""},
      {"wrong_kind_mutating", Webhook::kMutating, wrong_kind, {}, false, "fix the rules", ""},
      {"delete_is_allowed",
       Webhook::kValidating,
       AdmissionReviewOf(good, "DELETE"),
       {},
       true,
       "",
       ""},
      {"status_subresource_is_allowed", Webhook::kValidating, status_update, {}, true, "", ""},
      {"missing_object", Webhook::kValidating, no_object, {}, false, "request.object", ""},
      {"unknown_operation",
       Webhook::kValidating,
       bad_operation,
       {},
       false,
       "request.operation",
       ""},
  };
}

INSTANTIATE_TEST_SUITE_P(Reviews, AdmissionTable, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

TEST(Admission, DeniedCarriesForbiddenStatusWithFieldCauses) {
  StaticContextSource source({{}, {SharedServer()}});
  json review = AdmissionReviewOf(Backend("team-a", "hatchet", NatsBlock("hatchet..prod")));
  json response = json::parse(Review(review.dump(), Webhook::kValidating, source).body)["response"];
  EXPECT_EQ(response["status"]["code"], 403);
  EXPECT_EQ(response["status"]["reason"], "Forbidden");
  ASSERT_FALSE(response["status"]["details"]["causes"].empty());
  EXPECT_EQ(response["status"]["details"]["causes"][0]["field"], "spec.nats.subjectPrefix");
  EXPECT_EQ(response["status"]["details"]["kind"], "PubSubBackend");
}

TEST(Admission, MutatingPatchFillsDefaults) {
  StaticContextSource source;
  json object = Backend("team-a", "hatchet", {{"serverRef", {{"name", "shared"}}}});
  Outcome out = Review(AdmissionReviewOf(object).dump(), Webhook::kMutating, source);
  json response = json::parse(out.body)["response"];
  ASSERT_EQ(response["allowed"], true) << out.body;
  ASSERT_EQ(response["patchType"], "JSONPatch") << out.body;
  EXPECT_TRUE(out.patched);
  json patch = Decode(response["patch"].get<std::string>());
  ASSERT_TRUE(patch.is_array());
  json patched = object.patch(patch);
  EXPECT_EQ(patched, rules::DefaultedCopy(object));
  EXPECT_EQ(patched["spec"]["nats"]["subjectPrefix"], "hatchet.pubsub");
}

TEST(Admission, MutatingWithNothingMissingSendsNoPatch) {
  StaticContextSource source;
  json object = rules::DefaultedCopy(Backend("team-a", "hatchet", NatsBlock("hatchet.a")));
  Outcome out = Review(AdmissionReviewOf(object).dump(), Webhook::kMutating, source);
  json response = json::parse(out.body)["response"];
  EXPECT_EQ(response["allowed"], true);
  EXPECT_FALSE(response.contains("patch")) << out.body;
  EXPECT_FALSE(response.contains("patchType")) << out.body;
}

TEST(Admission, NotSyncedCacheRefusesValidationButNotDefaulting) {
  class Unsynced : public ContextSource {
   public:
    std::shared_ptr<const webhook_admission::ContextSnapshot> Snapshot() const override {
      return std::make_shared<const webhook_admission::ContextSnapshot>(rules::Context{});
    }
    bool Synced() const override { return false; }
  } source;
  json review = AdmissionReviewOf(Backend("team-a", "hatchet", NatsBlock("hatchet.a")));
  json v = json::parse(Review(review.dump(), Webhook::kValidating, source).body)["response"];
  EXPECT_EQ(v["allowed"], false);
  EXPECT_EQ(v["status"]["code"], 503);
  json m = json::parse(Review(review.dump(), Webhook::kMutating, source).body)["response"];
  EXPECT_EQ(m["allowed"], true);
}

TEST(Admission, V1beta1IsAnsweredInKind) {
  StaticContextSource source({{}, {SharedServer()}});
  json review = AdmissionReviewOf(Backend("team-a", "hatchet", NatsBlock("hatchet.a")));
  review["apiVersion"] = "admission.k8s.io/v1beta1";
  json out = json::parse(Review(review.dump(), Webhook::kValidating, source).body);
  EXPECT_EQ(out["apiVersion"], "admission.k8s.io/v1beta1");
  EXPECT_EQ(out["response"]["uid"], "uid-1");
}

struct Malformed {
  std::string name;
  std::string body;
  std::string message_has;
};

class MalformedTable : public ::testing::TestWithParam<Malformed> {};

TEST_P(MalformedTable, AnswersBadRequestWithAMessage) {
  StaticContextSource source;
  for (Webhook webhook : {Webhook::kValidating, Webhook::kMutating}) {
    Outcome out = Review(GetParam().body, webhook, source);
    EXPECT_EQ(out.http_status, 400);
    EXPECT_EQ(out.result, "error");
    json body = json::parse(out.body);  // always JSON
    EXPECT_EQ(body["response"]["allowed"], false);
    std::string message = body["response"]["status"]["message"];
    EXPECT_NE(message.find(GetParam().message_has), std::string::npos) << message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Bodies, MalformedTable,
    ::testing::Values(
        Malformed{"empty", "", "body is empty"},
        Malformed{"not_json", "{\"apiVersion\": ", "not valid JSON"},
        Malformed{"invalid_utf8", "{\"a\":\"\xff\xfe\"}", "not valid JSON"},
        Malformed{"array", "[1,2,3]", "must be an AdmissionReview"},
        Malformed{"wrong_api_version",
                  R"({"apiVersion":"v1","kind":"AdmissionReview","request":{"uid":"x"}})",
                  "must be an AdmissionReview"},
        Malformed{"no_request", R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})",
                  "request is missing"},
        Malformed{
            "uid_not_string",
            R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":7}})",
            "request.uid"},
        Malformed{"too_deep", std::string(100000, '[') + std::string(100000, ']'), "deeper than"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace switchboard::webhook_admission
