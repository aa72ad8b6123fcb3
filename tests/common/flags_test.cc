#include "switchboard/common/flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "switchboard/common/service_main.h"

namespace switchboard::flags {
namespace {

using std::chrono::milliseconds;

struct Target {
  std::string name;
  std::vector<std::string> tags;
  bool verbose = false;
  int workers = 4;
  size_t bytes = 0;
  milliseconds timeout{5000};
  std::string format = "text";
  std::vector<std::string> args;
};

// One flag of each kind, as a binary registers them.
void Register(FlagSet* set, Target* t) {
  set->String("name", &t->name, "a name").Metavar("NAME").Alias("old-name");
  set->Strings("tag", &t->tags, "a tag (repeatable)");
  set->Bool("verbose", &t->verbose, "say more").Short('v');
  set->Int("workers", &t->workers, "how many", 1, 256);
  set->Int("bytes", &t->bytes, "a size");
  set->Duration("timeout", &t->timeout, "how long", milliseconds(1), milliseconds(3600000));
  set->Value("output", "FORMAT", "text or json",
             [t](std::string_view v) -> Status {
               if (v != "text" && v != "json") return Status::InvalidArgument("use text or json");
               t->format = std::string(v);
               return Status::Ok();
             })
      .Short('o');
}

Result<Target> Parse(const std::vector<std::string>& args, bool positional = true) {
  FlagSet set("Usage: prog [flags]");
  Target t;
  Register(&set, &t);
  if (positional) set.Positional(&t.args);
  SB_RETURN_IF_ERROR(set.Parse(args));
  return t;
}

TEST(FlagSet, EveryFormOfEveryKind) {
  auto t = Parse({"--name", "a", "--tag=x", "--tag", "y", "-v", "--workers=8", "--bytes", "65536",
                  "--timeout=1m30s", "-o", "json", "file", "-", "--", "--not-a-flag"});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->name, "a");
  EXPECT_EQ(t->tags, (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(t->verbose);
  EXPECT_EQ(t->workers, 8);
  EXPECT_EQ(t->bytes, 65536u);
  EXPECT_EQ(t->timeout, milliseconds(90000));
  EXPECT_EQ(t->format, "json");
  EXPECT_EQ(t->args, (std::vector<std::string>{"file", "-", "--not-a-flag"}));
}

TEST(FlagSet, ShortFormsAliasesAndBooleans) {
  struct Case {
    std::vector<std::string> args;
    std::string format;
    bool verbose;
    std::string name;
  } cases[] = {
      {{"-ojson"}, "json", false, ""},
      {{"-o=json"}, "json", false, ""},
      {{"--output=json", "-v=false"}, "json", false, ""},
      {{"--verbose=true"}, "text", true, ""},
      {{"--verbose=1"}, "text", true, ""},
      {{"-v", "--verbose=F"}, "text", false, ""},
      {{"--old-name=b"}, "text", false, "b"},
      {{"--name="}, "text", false, ""},
  };
  for (const auto& c : cases) {
    auto t = Parse(c.args);
    ASSERT_TRUE(t.ok()) << c.args[0] << ": " << t.status().ToString();
    EXPECT_EQ(t->format, c.format) << c.args[0];
    EXPECT_EQ(t->verbose, c.verbose) << c.args[0];
    EXPECT_EQ(t->name, c.name) << c.args[0];
  }
}

TEST(FlagSet, ErrorsNameTheFlagAndTheFix) {
  struct Case {
    std::vector<std::string> args;
    const char* want;
  } cases[] = {
      {{"--bogus"}, "unknown flag --bogus (see --help)"},
      {{"-x"}, "unknown flag -x"},
      {{"-vq"}, "unknown flag -vq"},
      {{"--workers"}, "--workers needs a value"},
      {{"-o"}, "-o needs a value"},
      {{"--workers=0"}, "--workers: want an integer from 1 to 256, got \"0\""},
      {{"--workers=x"}, "--workers: want an integer from 1 to 256"},
      {{"--bytes=-1"}, "--bytes: want an integer from 0 to"},
      {{"--verbose=maybe"}, "--verbose: want true or false, got \"maybe\""},
      {{"--timeout=5"}, "--timeout: \"5\" is not a duration (missing unit: only 0 may go without"},
      {{"--timeout=soon"}, "--timeout: \"soon\" is not a duration"},
      {{"--timeout=0"}, "--timeout: \"0\" is out of range; use a duration from 1ms to 1h"},
      {{"--timeout=-1s"}, "--timeout: \"-1s\" is out of range"},
      {{"--timeout=2h"}, "out of range"},
      {{"-o", "xml"}, "-o: use text or json"},
  };
  for (const auto& c : cases) {
    auto t = Parse(c.args);
    ASSERT_FALSE(t.ok()) << c.args[0];
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find(c.want), std::string::npos)
        << t.status().message() << " should contain " << c.want;
  }
  auto stray = Parse({"file"}, /*positional=*/false);
  ASSERT_FALSE(stray.ok());
  EXPECT_NE(stray.status().message().find("unexpected argument \"file\""), std::string::npos);
}

TEST(FlagSet, HelpStopsParsingAndListsEveryFlag) {
  FlagSet set("Usage: prog [flags]\n\nDoes things.");
  Target t;
  Register(&set, &t);
  ASSERT_TRUE(set.Parse({"--workers=8", "-h", "--bogus"}).ok());
  EXPECT_TRUE(set.help());
  EXPECT_EQ(t.workers, 8);
  std::string help = set.Help();
  EXPECT_EQ(help.rfind("Usage: prog [flags]\n\nDoes things.\n\nFlags:\n", 0), 0u) << help;
  for (const char* want :
       {"      --name NAME ", "  -v, --verbose ", "      --workers N ", "      --timeout DURATION ",
        "  -o, --output FORMAT ", "  -h, --help ", "A bare number is refused, except 0."}) {
    EXPECT_NE(help.find(want), std::string::npos) << want << " in\n" << help;
  }
  EXPECT_EQ(help.find("old-name"), std::string::npos) << "aliases stay out of the help";
  FlagSet no_durations("Usage: p");
  EXPECT_EQ(no_durations.Help().find("Durations"), std::string::npos);
}

TEST(FlagSet, MultiLineHelpIsIndented) {
  FlagSet set("Usage: p");
  std::string s;
  set.String("a-rather-long-flag-name", &s, "first line\nsecond line").Metavar("PATH");
  EXPECT_NE(set.Help().find("      --a-rather-long-flag-name PATH\n" + std::string(32, ' ') +
                            "first line\n" + std::string(32, ' ') + "second line\n"),
            std::string::npos)
      << set.Help();
}

// A binary's list flags and addresses, bound once for ParseInto and HelpFor.
struct Service {
  std::vector<std::string> names{"kept"};
  std::vector<std::string> pairs;
  HostPort health{"", 8081};
  std::string metrics = ":8080";
  bool help = false;
};

void RegisterService(FlagSet* set, Service* s) {
  set->List("names", "a,b", &s->names, "names");
  set->List("pairs", "k/v,...", &s->pairs, "pairs", [](const std::string& item) -> Status {
    if (item.find('/') == std::string::npos) {
      return Status::InvalidArgument("\"" + item + "\" is not k/v");
    }
    return Status::Ok();
  });
  set->Address("health", &s->health, "health");
  set->Address("metrics", &s->metrics, "metrics");
}

TEST(FlagSet, ListsAndAddresses) {
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> names;
    std::vector<std::string> pairs;
    std::string health_host;
    int health_port;
    std::string metrics;
  } cases[] = {
      {{}, {"kept"}, {}, "", 8081, ":8080"},
      {{"--names=a, b,,c"}, {"a", "b", "c"}, {}, "", 8081, ":8080"},
      {{"--names", ""}, {}, {}, "", 8081, ":8080"},
      {{"--names=a", "--names=b"}, {"b"}, {}, "", 8081, ":8080"},  // the last one wins
      {{"--pairs=x/1,y/2"}, {"kept"}, {"x/1", "y/2"}, "", 8081, ":8080"},
      {{"--health=127.0.0.1:9", "--metrics", "0"}, {"kept"}, {}, "127.0.0.1", 9, "0"},
      {{"--health=[::1]:7", "--metrics=[::1]:8"}, {"kept"}, {}, "::1", 7, "[::1]:8"},
      {{"--health=0"}, {"kept"}, {}, "", -1, ":8080"},
      {{"--health=:0"}, {"kept"}, {}, "", 0, ":8080"},
  };
  for (const auto& c : cases) {
    std::string at = c.args.empty() ? "(none)" : c.args[0];
    auto s = ParseInto<Service>("Usage: p", c.args, RegisterService);
    ASSERT_TRUE(s.ok()) << at << ": " << s.status().ToString();
    EXPECT_EQ(s->names, c.names) << at;
    EXPECT_EQ(s->pairs, c.pairs) << at;
    EXPECT_EQ(s->health.host, c.health_host) << at;
    EXPECT_EQ(s->health.port, c.health_port) << at;
    EXPECT_EQ(s->metrics, c.metrics) << at;
    EXPECT_FALSE(s->help) << at;
  }
}

TEST(FlagSet, ListAndAddressErrorsNameTheFlagAndTheValue) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"--pairs=x/1,y"}, "--pairs: \"y\" is not k/v"},
      {{"--health=localhost"},
       "--health: \"localhost\" is not an address; use host:port, :port, or 0 to disable"},
      {{"--metrics=:99999"},
       "--metrics: \":99999\" is not an address; use host:port, :port, or 0 to disable"},
      {{"--health"}, "--health needs a value (see --help)"},
  };
  for (const auto& c : cases) {
    auto s = ParseInto<Service>("Usage: p", c.args, RegisterService);
    ASSERT_FALSE(s.ok()) << c.args[0];
    EXPECT_EQ(s.status().message(), c.message);
  }
}

TEST(FlagSet, ParseIntoStopsAtHelpAndHelpForListsTheSameFlags) {
  auto s = ParseInto<Service>("Usage: p", {"--names=a", "--help", "--health=bad"}, RegisterService);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->help);
  EXPECT_EQ(s->names, (std::vector<std::string>{"a"}));
  std::string help = HelpFor<Service>("Usage: p", RegisterService);
  for (const char* want : {"      --names a,b ", "      --pairs k/v,... ", "      --health ADDR ",
                           "      --metrics ADDR "}) {
    EXPECT_NE(help.find(want), std::string::npos) << want << " in\n" << help;
  }
  // The address forms close the help, after the duration grammar when both are there.
  EXPECT_TRUE(help.ends_with("this help\n\nAddresses: host:port or :port.\n")) << help;
  FlagSet both("Usage: p");
  milliseconds d;
  HostPort a;
  both.Duration("d", &d, "d");
  both.Address("a", &a, "a");
  EXPECT_NE(both.Help().find("except 0.\nAddresses: host:port or :port.\n"), std::string::npos)
      << both.Help();
  FlagSet none("Usage: p");
  EXPECT_EQ(none.Help().find("Addresses"), std::string::npos);
}

// The daemons' shared flags: one wording, both address kinds.
TEST(ServiceFlags, ClusterAndEndpointFlags) {
  FlagSet set("Usage: p");
  std::string kubeconfig;
  std::vector<std::string> namespaces;
  HostPort health{"", 8081}, metrics{"", 8080};
  service::ClusterFlags(&set, &kubeconfig, &namespaces);
  service::EndpointFlags(&set, &health, &metrics);
  ASSERT_TRUE(set.Parse({"--kubeconfig=/k", "--namespaces", "a, b", "--health-addr=127.0.0.1:1",
                         "--metrics-addr=0"})
                  .ok());
  EXPECT_EQ(kubeconfig, "/k");
  EXPECT_EQ(namespaces, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(health.host, "127.0.0.1");
  EXPECT_EQ(health.port, 1);
  EXPECT_EQ(metrics.port, -1);
  for (const char* want : {"--kubeconfig PATH", "--namespaces a,b", "--health-addr ADDR",
                           "--metrics-addr ADDR", "(default :8081; 0 disables)"}) {
    EXPECT_NE(set.Help().find(want), std::string::npos) << want << " in\n" << set.Help();
  }

  FlagSet text("Usage: p");
  std::string h = ":8081", m = ":8080";
  service::EndpointFlags(&text, &h, &m);
  EXPECT_TRUE(text.Parse({"--health-addr=[::1]:9"}).ok());
  EXPECT_EQ(h, "[::1]:9");
  EXPECT_EQ(m, ":8080");
  Status bad = text.Parse({"--metrics-addr=nope"});
  EXPECT_EQ(bad.message(),
            "--metrics-addr: \"nope\" is not an address; use host:port, :port, or 0 to disable");
  EXPECT_EQ(m, ":8080") << "a refused value leaves the default";
}

}  // namespace
}  // namespace switchboard::flags
