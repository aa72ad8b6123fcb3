#include "switchboard/operator_controller/config_sync.h"

#include <gtest/gtest.h>

#include "switchboard/testing/temp_dir.h"

namespace switchboard::operator_controller {
namespace {

TEST(ConfigSync, WritesOnlyWhenChanged) {
  testing::TempDir dir;
  std::string path = dir.path() + "/switchboard.conf";
  auto w = WriteFileIfChanged(path, "a\n");
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(*w);
  w = WriteFileIfChanged(path, "a\n");
  ASSERT_TRUE(w.ok());
  EXPECT_FALSE(*w);
  w = WriteFileIfChanged(path, "b\n");
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(*w);
  EXPECT_EQ(testing::ReadFile(path), "b\n");
  EXPECT_FALSE(WriteFileIfChanged("/nonexistent-dir/x", "a").ok());
}

TEST(ConfigSync, SecretValue) {
  // "max_payload: 1\n" in base64.
  auto v =
      SecretValue(R"({"data":{"switchboard.conf":"bWF4X3BheWxvYWQ6IDEK"}})", "switchboard.conf");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, "max_payload: 1\n");
  EXPECT_EQ(SecretValue(R"({"data":{}})", "k").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(SecretValue("nope", "k").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SecretValue(R"({"data":{"k":"!!"}})", "k").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(ConfigSync, PidFile) {
  testing::TempDir dir;
  EXPECT_EQ(*ReadPidFile(dir.WriteFile("p", "1234\n")), 1234);
  EXPECT_FALSE(ReadPidFile(dir.WriteFile("q", "x")).ok());
  EXPECT_FALSE(ReadPidFile(dir.path() + "/none").ok());
}

TEST(ConfigSync, VarzConfigLoadTime) {
  auto t = VarzConfigLoadTime(
      R"({"server_id":"N","config_load_time":"2026-12-01T02:50:00.123456789Z","max_payload":1})");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, "2026-12-01T02:50:00.123456789Z");
  EXPECT_EQ(VarzConfigLoadTime(R"({"server_id":"N"})").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(VarzConfigLoadTime(R"({"config_load_time":""})").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(VarzConfigLoadTime("<html>").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace switchboard::operator_controller
