// The controller loop with a scripted Reconciler (the thing under test is
// the loop, not a reconciler): one reconcile per key at a time, errors back
// off and retry, Terminal and AwaitChange are not retried, RequeueAfter is.
#include "switchboard/operator_controller/controller.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "switchboard/testing/wait.h"

namespace switchboard::operator_controller {
namespace {

using namespace std::chrono_literals;

class ScriptedReconciler : public Reconciler {
 public:
  std::function<Result<Action>(const std::string&, int)> script;
  Result<Action> Reconcile(const std::string& key) override {
    int n;
    {
      std::lock_guard l(mu);
      n = ++calls[key];
      if (++running[key] > 1) overlap = true;
    }
    auto r = script(key, n);
    std::this_thread::sleep_for(2ms);  // widen the window a second worker could use
    {
      std::lock_guard l(mu);
      --running[key];
    }
    return r;
  }
  int Calls(const std::string& key) {
    std::lock_guard l(mu);
    return calls[key];
  }
  std::mutex mu;
  std::map<std::string, int> calls, running;
  std::atomic<bool> overlap{false};
};

TEST(Controller, OneReconcilePerKeyAtATime) {
  ScriptedReconciler r;
  r.script = [](const std::string&, int) { return Action::AwaitChange(); };
  Metrics m;
  Controller c("Test", &r, &m, 8);
  c.Start();
  for (int round = 0; round < 50; round++) {
    for (int k = 0; k < 4; k++) c.Enqueue("ns/k" + std::to_string(k));
  }
  EXPECT_TRUE(testing::WaitFor(
      [&] { return c.queue().Depth() == 0 && c.queue().ProcessingCount() == 0; }, 5s));
  c.Stop();
  EXPECT_FALSE(r.overlap.load());
  EXPECT_GE(r.Calls("ns/k0"), 1);
  EXPECT_NE(m.Text().find(R"(switchboard_reconcile_total{kind="Test",result="success"})"),
            std::string::npos);
}

TEST(Controller, ErrorsBackOffAndRetryUntilSuccess) {
  ScriptedReconciler r;
  r.script = [](const std::string&, int n) -> Result<Action> {
    if (n < 4) return Status::Unavailable("api down");
    return Action::AwaitChange();
  };
  Metrics m;
  Controller c("Test", &r, &m, 2);
  c.Start();
  c.Enqueue("ns/x");
  EXPECT_TRUE(testing::WaitFor([&] { return r.Calls("ns/x") == 4; }, 5s));
  EXPECT_TRUE(testing::WaitFor([&] { return c.queue().NumRequeues("ns/x") == 0; }, 2s))
      << "success resets the backoff";
  c.Stop();
  EXPECT_NE(m.Text().find(R"(switchboard_reconcile_total{kind="Test",result="error"} 3)"),
            std::string::npos)
      << m.Text();
}

TEST(Controller, TerminalIsNotRetriedRequeueAfterIs) {
  ScriptedReconciler r;
  r.script = [](const std::string& key, int) -> Result<Action> {
    if (key == "ns/invalid") return Action::Terminal();
    return Action::RequeueAfter(20ms);
  };
  Metrics m;
  Controller c("Test", &r, &m, 2);
  c.Start();
  c.Enqueue("ns/invalid");
  c.Enqueue("ns/probe");
  EXPECT_TRUE(testing::WaitFor([&] { return r.Calls("ns/probe") >= 3; }, 5s));
  EXPECT_EQ(r.Calls("ns/invalid"), 1);
  c.Stop();
  EXPECT_NE(m.Text().find(R"(result="invalid"} 1)"), std::string::npos);
}

TEST(Controller, StopWaitsForTheRunningReconcile) {
  ScriptedReconciler r;
  std::atomic<bool> finished{false};
  r.script = [&](const std::string&, int) -> Result<Action> {
    std::this_thread::sleep_for(100ms);
    finished = true;
    return Action::AwaitChange();
  };
  Controller c("Test", &r, nullptr, 1);
  c.Start();
  c.Enqueue("ns/slow");
  ASSERT_TRUE(testing::WaitFor([&] { return r.Calls("ns/slow") == 1; }, 2s));
  c.Stop();
  EXPECT_TRUE(finished.load());
}

}  // namespace
}  // namespace switchboard::operator_controller
