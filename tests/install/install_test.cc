// `cmake --install build --prefix X` installs the four binaries into X/bin
// and the CRDs and the Helm chart into X/share/switchboard/.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"

namespace switchboard {
namespace {

namespace fs = std::filesystem;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

class InstallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(Env("SWITCHBOARD_BINARY_DIR").empty()) << "run through ctest";
    auto r = testing::Run(
        {SWITCHBOARD_CMAKE, "--install", Env("SWITCHBOARD_BINARY_DIR"), "--prefix", prefix()}, {},
        "", std::chrono::seconds(120));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  const std::string& prefix() const { return dir_.path(); }

 private:
  testing::TempDir dir_;
};

TEST_F(InstallTest, BinariesRunFromThePrefix) {
  for (const char* name : {"switchboard-operator", "switchboard-webhook", "switchboard-config-sync",
                           "switchboard-authorizer", "switchboard"}) {
    std::string path = prefix() + "/bin/" + name;
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0) << path << " not installed";
    EXPECT_TRUE(st.st_mode & S_IXUSR) << path << " is not executable";
    auto r = testing::Run({path, "--help"});
    EXPECT_EQ(r.exit_code, 0) << path << ": " << r.err;
    EXPECT_NE(r.out.find("--help"), std::string::npos) << path << " printed no usage";
  }
  auto v = testing::Run({prefix() + "/bin/switchboard", "--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out.rfind("switchboard ", 0), 0u) << v.out;
}

TEST_F(InstallTest, CrdsAreTheSourceOfTruthByteForByte) {
  const std::string source = Env("SWITCHBOARD_SOURCE_DIR") + "/crds";
  std::vector<std::string> installed;
  for (const auto& e : fs::directory_iterator(prefix() + "/share/switchboard/crds")) {
    installed.push_back(e.path().filename());
  }
  std::sort(installed.begin(), installed.end());
  EXPECT_EQ(installed, (std::vector<std::string>{"pubsub.switchboard.dev_natsservers.yaml",
                                                 "pubsub.switchboard.dev_pubsubbackends.yaml"}))
      << "only the CRDs: no README, no samples";
  for (const auto& name : installed) {
    EXPECT_EQ(testing::ReadFile(prefix() + "/share/switchboard/crds/" + name),
              testing::ReadFile(source + "/" + name))
        << name;
  }
}

TEST_F(InstallTest, ChartIsComplete) {
  const std::string source = Env("SWITCHBOARD_SOURCE_DIR") + "/charts/switchboard";
  const std::string chart = prefix() + "/share/switchboard/charts/switchboard";
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(source)) {
    if (!e.is_regular_file()) continue;
    std::string rel = fs::relative(e.path(), source);
    EXPECT_EQ(testing::ReadFile(chart + "/" + rel), testing::ReadFile(e.path())) << rel;
    ++files;
  }
  EXPECT_GE(files, 5u);
  EXPECT_TRUE(fs::exists(chart + "/Chart.yaml"));
  EXPECT_TRUE(fs::exists(chart + "/templates"));
}

}  // namespace
}  // namespace switchboard
