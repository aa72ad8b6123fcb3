#include "switchboard/operator_controller/options.h"

#include <gtest/gtest.h>

namespace switchboard::operator_controller {
namespace {

TEST(ParseDuration, AcceptsGoStyleDurations) {
  struct Case {
    const char* text;
    long long ms;
  } cases[] = {{"500ms", 500},  {"5s", 5000},     {"10m", 600000},
               {"1h", 3600000}, {"1m30s", 90000}, {"1.5s", 1500}};
  for (const auto& c : cases) {
    auto d = ParseDuration(c.text);
    ASSERT_TRUE(d.ok()) << c.text << ": " << d.status().ToString();
    EXPECT_EQ(d->count(), c.ms) << c.text;
  }
}

TEST(ParseDuration, RejectsGarbageNamingTheFix) {
  for (const char* text : {"", "5", "s", "5x", "-1s", "5s5"}) {
    auto d = ParseDuration(text);
    ASSERT_FALSE(d.ok()) << text;
    EXPECT_NE(d.status().message().find("e.g. 500ms"), std::string::npos);
  }
}

TEST(ParseHostPort, Forms) {
  auto a = ParseHostPort(":8080");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "");
  EXPECT_EQ(a->port, 8080);
  auto b = ParseHostPort("127.0.0.1:9");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->host, "127.0.0.1");
  auto c = ParseHostPort("0");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->port, -1);
  EXPECT_FALSE(ParseHostPort("localhost").ok());
  EXPECT_FALSE(ParseHostPort(":99999").ok());
}

TEST(ParseOptions, DefaultsAndFlags) {
  auto d = ParseOptions({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->workers, 4);
  EXPECT_FALSE(d->leader_elect);
  EXPECT_TRUE(d->namespaces.empty());

  auto o =
      ParseOptions({"--kubeconfig", "/k", "--namespaces=a, b,,c", "--leader-elect",
                    "--lease-namespace=ops", "--health-addr", "127.0.0.1:1", "--metrics-addr=0",
                    "--workers=8", "--probe-timeout=2s", "--probe-interval", "30s",
                    "--lease-duration=3s", "--renew-deadline=2s", "--retry-period=500ms"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->kubeconfig, "/k");
  EXPECT_EQ(o->namespaces, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(o->leader_elect);
  EXPECT_EQ(o->lease_namespace, "ops");
  EXPECT_EQ(o->workers, 8);
  EXPECT_EQ(o->probe_timeout.count(), 2000);
  EXPECT_EQ(o->probe_interval.count(), 30000);
  EXPECT_EQ(o->retry_period.count(), 500);
}

TEST(ParseOptions, ErrorsNameTheFlag) {
  struct Case {
    std::vector<std::string> args;
    const char* expect;
  } cases[] = {
      {{"--bogus"}, "unknown flag --bogus"},
      {{"--workers=0"}, "--workers"},
      {{"--workers"}, "--workers needs a value"},
      {{"--probe-timeout=soon"}, "--probe-timeout"},
      {{"--health-addr=nope"}, "--health-addr"},
      {{"--leader-elect=maybe"}, "--leader-elect"},
      {{"--lease-duration=5s", "--renew-deadline=5s"}, "--lease-duration must be greater"},
      {{"--log-level=loud"}, "--log-level"},
      {{"positional"}, "unexpected argument"},
  };
  for (const auto& c : cases) {
    auto o = ParseOptions(c.args);
    ASSERT_FALSE(o.ok()) << c.args[0];
    EXPECT_NE(o.status().message().find(c.expect), std::string::npos)
        << o.status().message() << " should contain " << c.expect;
  }
}

}  // namespace
}  // namespace switchboard::operator_controller
