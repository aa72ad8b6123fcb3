#include "switchboard/common/flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

}  // namespace
}  // namespace switchboard::flags
