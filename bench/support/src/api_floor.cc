#include "switchboard/bench/api_floor.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace switchboard::bench {

using kube::json;

ApiFloorResult RunApiFloor(kube::Client& c, const std::string& ns, int backends) {
  (void)c.Create(kube::resources::Namespace(),
                 {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
  const auto start = std::chrono::steady_clock::now();
  std::atomic<int> next{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; t++) {
    threads.emplace_back([&] {
      for (int i = next++; i < backends; i = next++) {
        const std::string name = "f" + std::to_string(i);
        json obj = {
            {"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
            {"kind", "PubSubBackend"},
            {"metadata", {{"name", name}, {"namespace", ns}}},
            {"spec",
             {{"kind", "nats"},
              {"nats", {{"serverRef", {{"name", "bench"}}}, {"subjectPrefix", "f." + name}}}}}};
        bool ok = c.Create(kube::resources::PubSubBackend(), obj).ok();
        ok = ok && c.Patch(kube::resources::PubSubBackend(), ns, name, kube::PatchType::kJson,
                           json::array({{{"op", "add"},
                                         {"path", "/metadata/finalizers"},
                                         {"value", json::array({"x.dev/f"})}}}))
                       .ok();
        for (const char* suffix : {"-nats-credentials", "-pubsub-env"}) {
          ok = ok && c.Create(kube::resources::Secret(),
                              {{"apiVersion", "v1"},
                               {"kind", "Secret"},
                               {"metadata", {{"name", name + suffix}, {"namespace", ns}}},
                               {"data", {{"k", "dmFsdWU="}}}})
                         .ok();
        }
        kube::PatchOptions po;
        po.subresource = "status";
        ok = ok && c.Patch(kube::resources::PubSubBackend(), ns, name, kube::PatchType::kMerge,
                           {{"status", {{"observedGeneration", 1}}}}, po)
                       .ok();
        ok = ok && c.Create(kube::resources::Event(),
                            {{"apiVersion", "v1"},
                             {"kind", "Event"},
                             {"metadata", {{"name", name + ".e"}, {"namespace", ns}}},
                             {"involvedObject",
                              {{"kind", "PubSubBackend"}, {"name", name}, {"namespace", ns}}},
                             {"reason", "Probed"},
                             {"message", "m"},
                             {"type", "Normal"}})
                       .ok();
        if (!ok) failed++;
      }
    });
  }
  for (auto& t : threads) t.join();
  ApiFloorResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.failures = failed.load();
  auto list = c.ListAll(kube::resources::PubSubBackend(), ns);
  if (list.ok()) {
    for (const auto& o : (*list)["items"]) {
      (void)c.Patch(kube::resources::PubSubBackend(), ns, kube::NameOf(o), kube::PatchType::kMerge,
                    {{"metadata", {{"finalizers", nullptr}}}});
    }
  }
  (void)c.Delete(kube::resources::Namespace(), "", ns);
  return r;
}

}  // namespace switchboard::bench
