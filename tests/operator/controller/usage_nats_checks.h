// What the two tests of per-installation usage against real servers share
// (usage_nats_test.cc: Debian's nats-server in both isolation modes;
// usage_operator_mode_nats_test.cc: NATS operator mode on three routed
// nats-server-callout): an installation's totals over every server, its N
// engine-like connections, and the checks both make of the counters as
// traffic flows and an engine closes. Only these two use it, so it stays
// beside them (tests/support holds what several parts' tests share).
//
// Each check drives collection through `round`: one UsageSource::Collect
// folded into `ledger` (the test's own, as its isolation collects).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "switchboard/operator_logic/usage.h"
#include "switchboard/testing/nats_client.h"
#include "switchboard/testing/wait.h"

namespace switchboard::operator_controller::usage_nats {

namespace logic = ::switchboard::operator_logic;

// How long a check waits for the counters.
inline constexpr auto kDeadline = std::chrono::seconds(15);
// How long one collection round waits for the servers' answers.
inline constexpr auto kWindow = std::chrono::milliseconds(300);

using Engines = std::vector<std::unique_ptr<::switchboard::testing::NatsTestClient>>;

// `inst`'s usage summed over every server.
inline logic::ServerUsage Sum(const logic::UsageLedger& ledger, const std::string& inst) {
  logic::ServerUsage s;
  for (const auto& [key, u] : ledger.usage()) {
    if (key.first != inst) continue;
    s.connections += u.connections;
    s.subscriptions += u.subscriptions;
    s.traffic += u.traffic;
    s.slow_consumers += u.slow_consumers;
  }
  return s;
}

// One engine of an installation per URL in `urls` (user and password),
// each subscribed on `subject`, appended to `engines`; `log_of(k)` (when
// set) is printed with a failure of the k-th. Asserts.
inline void ConnectEngines(const std::vector<std::string>& urls, const std::string& user,
                           const std::string& password, const std::string& subject,
                           Engines& engines,
                           const std::function<std::string(size_t)>& log_of = nullptr) {
  for (size_t k = 0; k < urls.size(); ++k) {
    engines.push_back(
        std::make_unique<::switchboard::testing::NatsTestClient>(urls[k], user, password));
    ASSERT_TRUE(engines.back()->connected()) << engines.back()->error() << "\n"
                                             << (log_of ? log_of(k) : std::string());
    ASSERT_TRUE(engines.back()->Subscribe(subject));
  }
}

// 10 messages of 5 bytes published by engines[0] on `subject` reach every
// engine (each one subscriber of it); once rounds show them, `inst`'s
// totals are exactly these: 10 in, 10 per engine out, 5 bytes each, and
// `other` has no traffic at all. Asserts.
inline void ExpectTrafficCounted(Engines& engines, const std::string& subject,
                                 const std::function<void()>& round,
                                 const logic::UsageLedger& ledger, const std::string& inst,
                                 const std::string& other) {
  ASSERT_FALSE(engines.empty());
  const int n = static_cast<int>(engines.size());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(engines[0]->Publish(subject, "hello"));
  for (auto& e : engines) {
    for (int i = 0; i < 10; ++i) ASSERT_EQ(e->Next(), "hello");
  }
  ASSERT_TRUE(::switchboard::testing::WaitFor(
      [&] {
        round();
        const auto a = Sum(ledger, inst);
        return a.traffic.msgs_in >= 10 && a.traffic.msgs_out >= 10 * n;
      },
      kDeadline))
      << "msgs in " << Sum(ledger, inst).traffic.msgs_in << ", out "
      << Sum(ledger, inst).traffic.msgs_out;
  const logic::ServerUsage a = Sum(ledger, inst);
  EXPECT_EQ(a.traffic.msgs_in, 10);
  EXPECT_EQ(a.traffic.msgs_out, 10 * n);
  EXPECT_EQ(a.traffic.bytes_in, 50);
  EXPECT_EQ(a.traffic.bytes_out, 50 * n);
  EXPECT_EQ(Sum(ledger, other).traffic, logic::Traffic{});
}

// engines[k] closes: once rounds show `inst` with a connection for each
// engine left (`engines` are all `inst`'s), its message totals are what
// they were before (a closed connection's counts are kept), and `other`
// still has its one connection. Asserts.
inline void ExpectEngineGoneTotalsKept(Engines& engines, size_t k,
                                       const std::function<void()>& round,
                                       const logic::UsageLedger& ledger, const std::string& inst,
                                       const std::string& other) {
  ASSERT_LT(k, engines.size());
  const logic::Traffic before = Sum(ledger, inst).traffic;
  engines.erase(engines.begin() + static_cast<std::ptrdiff_t>(k));
  const int left = static_cast<int>(engines.size());
  ASSERT_TRUE(::switchboard::testing::WaitFor(
      [&] {
        round();
        return ledger.Connections(inst) == left;
      },
      kDeadline))
      << inst << " has " << ledger.Connections(inst) << " connections, not " << left;
  const logic::ServerUsage a = Sum(ledger, inst);
  EXPECT_EQ(a.traffic.msgs_in, before.msgs_in);
  EXPECT_EQ(a.traffic.msgs_out, before.msgs_out);
  EXPECT_EQ(ledger.Connections(other), 1);
}

}  // namespace switchboard::operator_controller::usage_nats
