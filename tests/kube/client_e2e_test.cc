// The client against the real kube-apiserver: CRUD, typed errors, apply,
// optimistic concurrency, pagination, watch, RBAC.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "kube_e2e.h"
#include "switchboard/kube/event_recorder.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/wait.h"

namespace switchboard::kube::e2e {
namespace {

using namespace std::chrono_literals;
using switchboard::testing::WaitFor;

class ClientE2E : public KubeTest {};

TEST_F(ClientE2E, SecretCrudAndTypedErrors) {
  auto created = client_->Create(resources::Secret(), Secret("s1", {{"k", "v"}}));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(NameOf(*created), "s1");
  EXPECT_FALSE(UidOf(*created).empty());
  EXPECT_EQ((*created)["data"]["k"], "dg==");  // base64("v")

  auto again = client_->Create(resources::Secret(), Secret("s1"));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.status().message().find("\"s1\" already exists"), std::string::npos)
      << again.status().message();

  auto got = client_->Get(resources::Secret(), ns_, "s1");
  ASSERT_TRUE(got.ok());
  json upd = got.value();
  upd["data"]["k"] = "dzI=";  // "w2"
  auto updated = client_->Update(resources::Secret(), upd);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_NE(ResourceVersionOf(*updated), ResourceVersionOf(*got));

  auto patched = client_->Patch(resources::Secret(), ns_, "s1", PatchType::kMerge,
                                {{"metadata", {{"labels", {{"app", "x"}}}}}});
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  EXPECT_EQ((*patched)["metadata"]["labels"]["app"], "x");
  EXPECT_EQ((*patched)["data"]["k"], "dzI=");

  auto jp =
      client_->Patch(resources::Secret(), ns_, "s1", PatchType::kJson,
                     json::array({{{"op", "replace"}, {"path", "/data/k"}, {"value", "eA=="}}}));
  ASSERT_TRUE(jp.ok()) << jp.status().ToString();
  EXPECT_EQ((*jp)["data"]["k"], "eA==");
  auto bad_test =
      client_->Patch(resources::Secret(), ns_, "s1", PatchType::kJson,
                     json::array({{{"op", "test"}, {"path", "/data/k"}, {"value", "nope"}}}));
  ASSERT_FALSE(bad_test.ok());
  EXPECT_EQ(bad_test.status().code(), StatusCode::kInvalidArgument) << bad_test.status().ToString();

  auto list = client_->List(resources::Secret(), ns_, {.label_selector = "app=x"});
  ASSERT_TRUE(list.ok());
  ASSERT_EQ((*list)["items"].size(), 1u);

  auto del = client_->Delete(resources::Secret(), ns_, "s1");
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  auto gone = client_->Get(resources::Secret(), ns_, "s1");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(gone.status().message(), "secrets \"s1\" not found");
  auto del_again = client_->Delete(resources::Secret(), ns_, "s1");
  EXPECT_EQ(del_again.status().code(), StatusCode::kNotFound);
}

TEST_F(ClientE2E, PubSubBackendCrudAndStatusSubresource) {
  auto created = client_->Create(resources::PubSubBackend(), Backend("b1"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ((*created)["spec"]["postgres"]["maxConns"], 5);
  EXPECT_EQ((*created)["metadata"]["generation"], 1);

  json with_status = created.value();
  with_status["status"] = {
      {"observedGeneration", 1},
      {"conditions", json::array({{{"type", "Ready"},
                                   {"status", "True"},
                                   {"reason", "Configured"},
                                   {"message", "ok"},
                                   {"lastTransitionTime", "2026-11-30T10:00:00Z"}}})}};
  auto st = client_->UpdateStatus(resources::PubSubBackend(), with_status);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ((*st)["status"]["conditions"][0]["reason"], "Configured");
  EXPECT_EQ((*st)["metadata"]["generation"], 1) << "status writes do not bump generation";

  // A spec change through the main resource ignores .status and bumps generation.
  json spec_change = st.value();
  spec_change["spec"]["postgres"]["maxConns"] = 7;
  spec_change["status"] = json::object();
  auto upd = client_->Update(resources::PubSubBackend(), spec_change);
  ASSERT_TRUE(upd.ok()) << upd.status().ToString();
  EXPECT_EQ((*upd)["metadata"]["generation"], 2);
  EXPECT_EQ((*upd)["status"]["conditions"][0]["reason"], "Configured");

  // Schema validation errors come back as kInvalidArgument with the field.
  json invalid = Backend("b2");
  invalid["spec"]["kind"] = "kafka";
  auto bad = client_->Create(resources::PubSubBackend(), invalid);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("spec.kind"), std::string::npos) << bad.status().message();

  auto del = client_->Delete(resources::PubSubBackend(), ns_, "b1");
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(client_->Get(resources::PubSubBackend(), ns_, "b1").status().code(),
            StatusCode::kNotFound);
}

TEST_F(ClientE2E, ServerSideApplyTwiceIsANoOp) {
  ApplyOptions ao;
  ao.field_manager = "switchboard-test";
  json desired = Secret("applied", {{"k", "v"}});
  desired["metadata"]["labels"] = {{"app.kubernetes.io/managed-by", "switchboard"}};
  auto first = client_->Apply(resources::Secret(), desired, ao);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = client_->Apply(resources::Secret(), desired, ao);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(ResourceVersionOf(*first), ResourceVersionOf(*second)) << "no change the second time";

  // Another manager changing our field conflicts unless forced.
  ApplyOptions other;
  other.field_manager = "someone-else";
  json theirs = Secret("applied");
  theirs.erase("stringData");
  theirs["metadata"]["labels"] = {{"app.kubernetes.io/managed-by", "helm"}};
  auto conflict = client_->Apply(resources::Secret(), theirs, other);
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.status().code(), StatusCode::kConflict);
  EXPECT_NE(conflict.status().message().find("switchboard-test"), std::string::npos)
      << conflict.status().message();
  other.force = true;
  auto forced = client_->Apply(resources::Secret(), theirs, other);
  ASSERT_TRUE(forced.ok()) << forced.status().ToString();
  EXPECT_EQ((*forced)["metadata"]["labels"]["app.kubernetes.io/managed-by"], "helm");
}

TEST_F(ClientE2E, ApplyStatusSubresource) {
  ASSERT_TRUE(client_->Create(resources::PubSubBackend(), Backend("b")).ok());
  json status = {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
                 {"kind", "PubSubBackend"},
                 {"metadata", {{"name", "b"}, {"namespace", ns_}}},
                 {"status", {{"observedGeneration", 1}, {"subject", "hatchet.pubsub"}}}};
  ApplyOptions ao;
  ao.field_manager = "switchboard-operator";
  auto first = client_->ApplyStatus(resources::PubSubBackend(), status, ao);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ((*first)["status"]["subject"], "hatchet.pubsub");
  auto second = client_->ApplyStatus(resources::PubSubBackend(), status, ao);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(ResourceVersionOf(*first), ResourceVersionOf(*second));
  auto st = client_->GetSubresource(resources::PubSubBackend(), ns_, "b", "status");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ((*st)["status"]["subject"], "hatchet.pubsub");
}

TEST_F(ClientE2E, StaleResourceVersionConflicts) {
  auto created = client_->Create(resources::ConfigMap(), ConfigMap("cm", {{"a", "1"}}));
  ASSERT_TRUE(created.ok());
  json first = created.value();
  json second = created.value();
  first["data"]["a"] = "2";
  ASSERT_TRUE(client_->Update(resources::ConfigMap(), first).ok());
  second["data"]["a"] = "3";  // still carries the old resourceVersion
  auto stale = client_->Update(resources::ConfigMap(), second);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), StatusCode::kConflict);
  EXPECT_NE(stale.status().message().find("the object has been modified"), std::string::npos)
      << stale.status().message();
  auto now = client_->Get(resources::ConfigMap(), ns_, "cm");
  ASSERT_TRUE(now.ok());
  EXPECT_EQ((*now)["data"]["a"], "2") << "the stale write must not have landed";
}

TEST_F(ClientE2E, DeletePreconditions) {
  auto created = client_->Create(resources::ConfigMap(), ConfigMap("cm"));
  ASSERT_TRUE(created.ok());
  DeleteOptions wrong;
  wrong.precondition_uid = "00000000-0000-0000-0000-000000000000";
  auto r = client_->Delete(resources::ConfigMap(), ns_, "cm", wrong);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kConflict) << r.status().ToString();
  DeleteOptions stale_rv;
  stale_rv.precondition_resource_version = "1";
  EXPECT_EQ(client_->Delete(resources::ConfigMap(), ns_, "cm", stale_rv).status().code(),
            StatusCode::kConflict);
  DeleteOptions right;
  right.precondition_uid = UidOf(*created);
  right.precondition_resource_version = ResourceVersionOf(*created);
  right.propagation_policy = PropagationPolicy::kForeground;
  ASSERT_TRUE(client_->Delete(resources::ConfigMap(), ns_, "cm", right).ok());
}

TEST_F(ClientE2E, PaginationLimitTwoOverFive) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(client_
                    ->Create(resources::ConfigMap(),
                             ConfigMap("cm" + std::to_string(i), {}, {{"page", "yes"}}))
                    .ok());
  }
  ASSERT_TRUE(client_->Create(resources::ConfigMap(), ConfigMap("other")).ok());
  ListOptions lo;
  lo.limit = 2;
  lo.label_selector = "page=yes";
  std::vector<std::string> names;
  int pages = 0;
  while (true) {
    auto page = client_->List(resources::ConfigMap(), ns_, lo);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    ++pages;
    EXPECT_LE((*page)["items"].size(), 2u);
    for (const auto& it : (*page)["items"]) names.push_back(NameOf(it));
    std::string cont = (*page)["metadata"].value("continue", "");
    if (cont.empty()) break;
    lo.continue_token = cont;
    ASSERT_LT(pages, 10);
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names, (std::vector<std::string>{"cm0", "cm1", "cm2", "cm3", "cm4"}));

  ListOptions all;
  all.limit = 2;
  all.label_selector = "page=yes";
  auto everything = client_->ListAll(resources::ConfigMap(), ns_, all);
  ASSERT_TRUE(everything.ok());
  EXPECT_EQ((*everything)["items"].size(), 5u);
  EXPECT_FALSE(ResourceVersionOf(*everything).empty());
  EXPECT_FALSE((*everything)["metadata"].contains("continue"));

  ListOptions bad;
  bad.limit = 2;
  bad.continue_token = "not-a-token";
  auto r = client_->List(resources::ConfigMap(), ns_, bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
}

TEST_F(ClientE2E, WatchSeesCreateModifyDeleteInOrder) {
  auto list = client_->List(resources::ConfigMap(), ns_);
  ASSERT_TRUE(list.ok());
  std::string rv = ResourceVersionOf(*list);
  std::mutex mu;
  std::vector<std::string> seen;  // guarded by mu
  Cancellation cancel;
  Status watch_status;
  std::thread watcher([&] {
    WatchOptions wo;
    wo.resource_version = rv;
    watch_status = client_->Watch(
        resources::ConfigMap(), ns_, wo,
        [&](const WatchEvent& ev) {
          if (ev.type == WatchEventType::kBookmark) return true;
          std::lock_guard<std::mutex> lock(mu);
          seen.push_back(std::string(WatchEventTypeName(ev.type)) + " " + NameOf(ev.object) + " " +
                         ev.object["data"].value("v", ""));
          return true;
        },
        &cancel);
  });
  // The watch starts from `rv`, so events are delivered even if the
  // writes below happen before the stream is open.
  ASSERT_TRUE(client_->Create(resources::ConfigMap(), ConfigMap("w", {{"v", "1"}})).ok());
  ASSERT_TRUE(
      client_->Patch(resources::ConfigMap(), ns_, "w", PatchType::kMerge, {{"data", {{"v", "2"}}}})
          .ok());
  ASSERT_TRUE(client_->Delete(resources::ConfigMap(), ns_, "w").ok());
  bool got_all = WaitFor(
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        return seen.size() >= 3;
      },
      10s);
  cancel.Cancel();
  watcher.join();
  ASSERT_TRUE(got_all);
  EXPECT_TRUE(watch_status.ok()) << watch_status.ToString();
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED w 1", "MODIFIED w 2", "DELETED w 2"}));
}

TEST_F(ClientE2E, AdmissionWarningsReachTheCaller) {
  json with_unknown = ConfigMap("warn", {{"a", "1"}});
  with_unknown["spec"] = {
      {"bogus", true}};  // unknown field: the server warns (fieldValidation=Warn)
  std::vector<std::string> warnings;
  std::vector<std::string> handled;
  client_->SetWarningHandler([&](const std::string& w) { handled.push_back(w); });
  CallOptions call;
  call.warnings = &warnings;
  auto r = client_->Create(resources::ConfigMap(), with_unknown, {}, call);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings[0].find("unknown field \"spec\""), std::string::npos) << warnings[0];
  EXPECT_EQ(handled, warnings);
}

// A token for a fresh ServiceAccount through the TokenRequest API.
std::string CreateToken(Client* client, const std::string& ns, const std::string& sa) {
  json account = {{"apiVersion", "v1"},
                  {"kind", "ServiceAccount"},
                  {"metadata", {{"name", sa}, {"namespace", ns}}}};
  auto created = client->Create(resources::ServiceAccount(), account);
  EXPECT_TRUE(created.ok()) << created.status().ToString();
  json tr = {{"apiVersion", "authentication.k8s.io/v1"},
             {"kind", "TokenRequest"},
             {"spec", {{"expirationSeconds", 600}}}};
  auto token = client->CreateSubresource(resources::ServiceAccount(), ns, sa, "token", tr);
  EXPECT_TRUE(token.ok()) << token.status().ToString();
  if (!token.ok()) return "";
  return (*token)["status"].value("token", "");
}

TEST_F(ClientE2E, TokenWithoutRbacIsForbidden) {
  std::string token = CreateToken(client_.get(), ns_, "bare");
  ASSERT_FALSE(token.empty());
  Config sa = config_;
  sa.client_cert_pem.clear();
  sa.client_key_pem.clear();
  sa.bearer_token = token;
  auto c = Client::New(sa);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto r = (*c)->List(resources::Secret(), ns_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(r.status().message().find("system:serviceaccount:" + ns_ + ":bare"), std::string::npos)
      << r.status().message();

  sa.bearer_token = "not-a-valid-token";
  auto bogus = Client::New(sa);
  ASSERT_TRUE(bogus.ok());
  EXPECT_EQ((*bogus)->List(resources::Secret(), ns_).status().code(), StatusCode::kUnauthenticated);
}

TEST_F(ClientE2E, TokenFileIsReReadWhenItChanges) {
  // Two accounts: "reader" may list secrets here, "bare" may not.
  std::string bare = CreateToken(client_.get(), ns_, "bare");
  std::string reader = CreateToken(client_.get(), ns_, "reader");
  json role = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
               {"kind", "Role"},
               {"metadata", {{"name", "read-secrets"}, {"namespace", ns_}}},
               {"rules", json::array({{{"apiGroups", json::array({""})},
                                       {"resources", json::array({"secrets"})},
                                       {"verbs", json::array({"list"})}}})}};
  json binding = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "RoleBinding"},
      {"metadata", {{"name", "reader"}, {"namespace", ns_}}},
      {"roleRef",
       {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", "read-secrets"}}},
      {"subjects",
       json::array({{{"kind", "ServiceAccount"}, {"name", "reader"}, {"namespace", ns_}}})}};
  ResourceRef roles{"rbac.authorization.k8s.io", "v1", "roles", "Role", true};
  ResourceRef bindings{"rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true};
  ASSERT_TRUE(client_->Create(roles, role).ok());
  ASSERT_TRUE(client_->Create(bindings, binding).ok());

  switchboard::testing::TempDir dir;
  std::string token_path = dir.WriteFile("token", bare);
  Config sa = config_;
  sa.client_cert_pem.clear();
  sa.client_key_pem.clear();
  sa.token_file = token_path;
  auto c = Client::New(sa);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->List(resources::Secret(), ns_).status().code(), StatusCode::kPermissionDenied);
  dir.WriteFile("token", reader + "\n");  // rotated (a different size: seen at once)
  // RBAC caches may take a moment to see the new binding.
  Status last;
  EXPECT_TRUE(WaitFor(
      [&] {
        last = (*c)->List(resources::Secret(), ns_).status();
        return last.ok();
      },
      10s, 100ms))
      << last.ToString();
}

TEST_F(ClientE2E, WrongCaFailsVerification) {
  Config wrong = config_;
  // Our own client certificate is not a CA for the server's certificate.
  wrong.ca_pem = config_.client_cert_pem;
  auto c = Client::New(wrong);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto r = (*c)->Get(resources::Namespace(), "", ns_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().ToString();
}

TEST_F(ClientE2E, EventRecorderAggregatesRepeats) {
  auto obj = client_->Create(resources::PubSubBackend(), Backend("b"));
  ASSERT_TRUE(obj.ok());
  {
    EventRecorder::Options o;
    o.component = "switchboard-test";
    EventRecorder rec(client_.get(), o);
    rec.Record(*obj, EventType::kWarning, "ConfigInvalid", "spec.kind: bad");
    rec.Record(*obj, EventType::kWarning, "ConfigInvalid", "spec.kind: bad");
    rec.Record(*obj, EventType::kWarning, "ConfigInvalid", "spec.kind: bad");
    rec.Record(*obj, EventType::kNormal, "Configured", "ok");
    ASSERT_TRUE(rec.Flush(10s));
    EXPECT_EQ(rec.failed(), 0u);
  }
  auto events = client_->List(resources::Event(), ns_);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ((*events)["items"].size(), 2u) << events->dump();
  std::map<std::string, json> by_reason;
  for (const auto& e : (*events)["items"]) by_reason[e["reason"]] = e;
  EXPECT_EQ(by_reason["ConfigInvalid"]["count"], 3);
  EXPECT_EQ(by_reason["ConfigInvalid"]["type"], "Warning");
  EXPECT_EQ(by_reason["ConfigInvalid"]["involvedObject"]["uid"], UidOf(*obj));
  EXPECT_EQ(by_reason["ConfigInvalid"]["involvedObject"]["kind"], "PubSubBackend");
  EXPECT_EQ(by_reason["Configured"]["count"], 1);
}

TEST_F(ClientE2E, OneClientServesManyThreads) {
  ASSERT_TRUE(client_->Create(resources::ConfigMap(), ConfigMap("shared", {{"n", "0"}})).ok());
  std::atomic<int> ok{0};
  std::atomic<int> conflicts{0};
  std::atomic<int> written{0};
  std::atomic<int> other_failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        auto got = client_->Get(resources::ConfigMap(), ns_, "shared");
        if (got.ok()) ok.fetch_add(1);
        json next = got.ok() ? got.value() : json::object();
        next["data"]["n"] = std::to_string(t * 100 + i);
        auto upd = client_->Update(resources::ConfigMap(), next);
        if (upd.ok()) {
          written.fetch_add(1);
        } else if (upd.status().code() == StatusCode::kConflict) {
          conflicts.fetch_add(1);
        } else {
          other_failures.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 60);
  EXPECT_EQ(other_failures.load(), 0);
  EXPECT_EQ(written.load() + conflicts.load(), 60);
  EXPECT_GE(written.load(), 1);
  // Racing read-modify-writes: the server rejects the stale ones; some must
  // have lost (6 writers) and none may have failed for another reason.
  auto final_obj = client_->Get(resources::ConfigMap(), ns_, "shared");
  ASSERT_TRUE(final_obj.ok());
  EXPECT_NE((*final_obj)["data"]["n"], "0");
}

}  // namespace
}  // namespace switchboard::kube::e2e
