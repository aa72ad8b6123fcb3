#include "switchboard/operator_controller/options.h"

#include <gtest/gtest.h>

namespace switchboard::operator_controller {
namespace {

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
  EXPECT_EQ(d->workers, 8);
  EXPECT_FALSE(d->leader_elect);
  EXPECT_TRUE(d->namespaces.empty());

  auto o =
      ParseOptions({"--kubeconfig", "/k", "--namespaces=a, b,,c", "--leader-elect",
                    "--lease-namespace=ops", "--health-addr", "127.0.0.1:1", "--metrics-addr=0",
                    "--workers=12", "--probe-timeout=2s", "--probe-interval", "30s",
                    "--lease-duration=3s", "--renew-deadline=2s", "--retry-period=500ms"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->kubeconfig, "/k");
  EXPECT_EQ(o->namespaces, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(o->leader_elect);
  EXPECT_EQ(o->lease_namespace, "ops");
  EXPECT_EQ(o->workers, 12);
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
      {{"--probe-timeout=0s"}, "--probe-timeout"},
      {{"--retry-period=5"}, "--retry-period"},
      {{"positional"}, "unexpected argument"},
  };
  for (const auto& c : cases) {
    auto o = ParseOptions(c.args);
    ASSERT_FALSE(o.ok()) << c.args[0];
    EXPECT_NE(o.status().message().find(c.expect), std::string::npos)
        << o.status().message() << " should contain " << c.expect;
  }
}

TEST(ParseOptions, AliasAndHelp) {
  auto o = ParseOptions({"--leader-election-namespace", "ops", "--help", "--bogus"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->lease_namespace, "ops");
  EXPECT_TRUE(o->help);
  for (const char* flag : {"--kubeconfig PATH",
                           "--namespaces a,b",
                           "--leader-elect",
                           "--lease-namespace NS",
                           "--lease-name NAME",
                           "--identity ID",
                           "--lease-duration DURATION",
                           "--renew-deadline DURATION",
                           "--retry-period DURATION",
                           "--health-addr ADDR",
                           "--metrics-addr ADDR",
                           "--workers N",
                           "--probe-workers N",
                           "--probe-timeout DURATION",
                           "--probe-interval DURATION",
                           "--resync-period DURATION",
                           "--field-manager NAME",
                           "--log-level LEVEL",
                           "--help",
                           "A bare number is refused, except 0."}) {
    EXPECT_NE(Usage().find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace switchboard::operator_controller
