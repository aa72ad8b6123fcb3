// The fixture of the tests that run jwtcheck (the reference nats-io/jwt v2
// and nkeys, built into the tools cache by scripts/build-tools.sh) on
// natsauth's keys and tokens. A missing tool is a failure, not a skip.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "switchboard/common/base64.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/tool_path.h"

namespace switchboard::natsauth {

// A new key pair of that kind (a test failure when the CSPRNG fails).
inline KeyPair Generate(KeyType type) {
  auto pair = KeyPair::Generate(type);
  EXPECT_TRUE(pair.ok()) << pair.status().ToString();
  return std::move(pair).value();
}

// The claims text of a token.
inline std::string Payload(const std::string& token) {
  size_t a = token.find('.') + 1;
  return base64::DecodeUrl(std::string_view(token).substr(a, token.rfind('.') - a)).value_or("");
}

class JwtcheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tool_ = switchboard::testing::ToolPath("jwtcheck");
    ASSERT_EQ(access(tool_.c_str(), X_OK), 0)
        << tool_ << " is missing: build it with `bash scripts/build-tools.sh jwtcheck` "
        << "(make test does, through make tools)";
  }

  // Runs a jwtcheck command; its stdout without the newline.
  switchboard::testing::RunResult Run(const std::vector<std::string>& args,
                                      const std::string& input) {
    std::vector<std::string> argv{tool_};
    argv.insert(argv.end(), args.begin(), args.end());
    switchboard::testing::RunResult r = switchboard::testing::Run(argv, {}, input);
    while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
    return r;
  }
  std::string MustRun(const std::vector<std::string>& args, const std::string& input) {
    switchboard::testing::RunResult r = Run(args, input);
    EXPECT_EQ(r.exit_code, 0) << "jwtcheck " << args[0] << ": " << r.err;
    return r.out;
  }
  nlohmann::json Decode(const std::string& command, const std::string& issuer,
                        const std::string& token) {
    std::string out = MustRun({command, issuer}, token);
    nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
    EXPECT_TRUE(j.is_object()) << out;
    return j;
  }

  std::string tool_;
  int64_t now_ = static_cast<int64_t>(std::time(nullptr));
};

}  // namespace switchboard::natsauth
