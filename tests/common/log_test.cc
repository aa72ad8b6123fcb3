#include "switchboard/common/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace switchboard::log {
namespace {

std::string Capture(const std::function<void()>& fn) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  SetOutputFd(fds[1]);
  fn();
  SetOutputFd(2);
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  return out;
}

TEST(LogTest, WritesOneJsonObjectPerLine) {
  SetLevel(Level::kInfo);
  std::string out = Capture([] {
    Info("operator", "reconciled", {{"namespace", "a"}, {"name", "b"}});
    Debug("operator", "hidden");
  });
  ASSERT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["level"], "info");
  EXPECT_EQ(j["logger"], "operator");
  EXPECT_EQ(j["msg"], "reconciled");
  EXPECT_EQ(j["namespace"], "a");
  EXPECT_TRUE(j.contains("ts"));
}

TEST(LogTest, FieldsCannotOverrideCoreKeysAndBadUtf8IsReplaced) {
  std::string out = Capture([] {
    Warn("x", "m", {{"msg", "spoof"}, {"raw", std::string("\xff\xfe")}});
  });
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["msg"], "m");
  EXPECT_EQ(j["level"], "warn");
}

TEST(LogTest, ParseLevel) {
  Level l;
  EXPECT_TRUE(ParseLevel("debug", &l));
  EXPECT_EQ(l, Level::kDebug);
  EXPECT_FALSE(ParseLevel("loud", &l));
}

}  // namespace
}  // namespace switchboard::log
