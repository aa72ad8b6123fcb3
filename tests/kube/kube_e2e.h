// Shared fixture for tests against the real local kube-apiserver (the ctest
// fixture "cluster", scripts/cluster.sh): an admin Client and a fresh
// namespace per test.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <string>

#include "switchboard/kube/client.h"

namespace switchboard::kube::e2e {

inline std::string Kubeconfig() {
  const char* p = std::getenv("SWITCHBOARD_KUBECONFIG");
  return p == nullptr ? "" : p;
}

class KubeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string kc = Kubeconfig();
    ASSERT_FALSE(kc.empty()) << "SWITCHBOARD_KUBECONFIG is not set: run through ctest (fixture "
                                "cluster) or `eval \"$(scripts/cluster.sh env)\"`";
    auto cfg = Config::FromKubeconfig(kc);
    ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
    config_ = cfg.value();
    auto c = Client::New(config_);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    client_ = std::move(c.value());
    ns_ = NewNamespace();
  }

  // A namespace named after the test, with a random suffix. Namespaces are
  // left behind: without a controller-manager a deleted one never finishes
  // terminating, and the cluster is thrown away after the run.
  std::string NewNamespace() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string base = std::string("kube-") + info->name();
    std::string name;
    for (char c : base) {
      if (std::isalnum(static_cast<unsigned char>(c))) {
        name.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      } else {
        name.push_back('-');
      }
    }
    if (name.size() > 50) name.resize(50);
    std::mt19937 rng(std::random_device{}());
    name += "-" + std::to_string(rng() % 1000000);
    json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
    auto r = client_->Create(resources::Namespace(), ns);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return name;
  }

  json Secret(const std::string& name, const json& string_data = json::object()) const {
    return {{"apiVersion", "v1"},
            {"kind", "Secret"},
            {"metadata", {{"name", name}, {"namespace", ns_}}},
            {"stringData", string_data}};
  }

  json Backend(const std::string& name, int max_conns = 5) const {
    return {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
            {"kind", "PubSubBackend"},
            {"metadata", {{"name", name}, {"namespace", ns_}}},
            {"spec", {{"kind", "postgres"}, {"postgres", {{"maxConns", max_conns}}}}}};
  }

  json ConfigMap(const std::string& name, const json& data = json::object(),
                 const json& labels = json::object()) const {
    return {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", name}, {"namespace", ns_}, {"labels", labels}}},
            {"data", data}};
  }

  Config config_;
  std::unique_ptr<Client> client_;
  std::string ns_;
};

}  // namespace switchboard::kube::e2e
