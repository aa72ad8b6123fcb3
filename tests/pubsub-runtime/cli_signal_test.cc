// SIGTERM of `switchboard pubsub sub` and `pub` while chunked messages just
// over 16 MiB are on the wire: the exit code the CLI README documents, and
// (in the ASan build, where the binary is instrumented too) no sanitizer
// report, which would also change the exit code.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <fstream>

#include "chunk_publisher.h"
#include "switchboard/testing/nats_server.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/wait.h"

namespace switchboard::pubsub {
namespace {

using testing::NatsServer;
using testutil::Publisher;

constexpr const char* kTenant = "8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

std::string Binary() {
  const char* dir = std::getenv("SWITCHBOARD_BINARY_DIR");
  return std::string(dir ? dir : SWITCHBOARD_TEST_BINARY_DIR) + "/bin/switchboard";
}

// `sub` with stdout discarded (each line is a whole ~11 MiB message);
// stderr goes to the log.
testing::Process StartSub(const NatsServer& server, const testing::TempDir& dir,
                          const std::string& extra) {
  testing::Process::Options o;
  o.argv = {"sh", "-c",
            "exec '" + Binary() + "' pubsub sub --tenant " + kTenant + " " + extra + " >/dev/null"};
  o.env = {{"SERVER_MSGQUEUE_PUBSUB_NATS_URL", server.url()}};
  o.log_path = dir.path() + "/sub.log";
  return testing::Process(o);
}

void ExpectNoSanitizerReport(const std::string& log) {
  EXPECT_EQ(log.find("Sanitizer"), std::string::npos) << log.substr(0, 4000);
}

// Signalled while rounds of chunked messages keep arriving; `sub` waits
// for `rounds` rounds to have been flushed to the server first.
std::optional<int> SigtermDuringLoad(const std::string& extra, std::string* log) {
  NatsServer server;
  EXPECT_TRUE(server.ok()) << server.Log();
  testing::TempDir dir;
  testing::Process sub = StartSub(server, dir, extra);
  EXPECT_TRUE(testing::WaitFor([&] { return sub.Log().find("subscribed to") != std::string::npos; },
                               std::chrono::seconds(30)))
      << sub.Log();
  Publisher publisher(server.url(), std::string("hatchet.pubsub.") + kTenant + "_v1",
                      Publisher::Mode::kContinuous);
  EXPECT_TRUE(publisher.ok());
  EXPECT_TRUE(testing::WaitFor([&] { return publisher.rounds() >= 2; }, std::chrono::seconds(60)));
  EXPECT_TRUE(sub.Signal(SIGTERM));
  auto code = sub.Wait(std::chrono::seconds(60));
  publisher.Stop();
  *log = sub.Log();
  return code;
}

TEST(PubsubCliSignalTest, SubWithoutCountExitsZeroOnSigtermWhileChunksArrive) {
  std::string log;
  auto code = SigtermDuringLoad("", &log);
  ASSERT_TRUE(code.has_value()) << "still running 60 s after SIGTERM\n" << log;
  EXPECT_EQ(*code, 0) << log;
  ExpectNoSanitizerReport(log);
}

TEST(PubsubCliSignalTest, SubCutShortOfCountExitsOneOnSigterm) {
  std::string log;
  auto code = SigtermDuringLoad("--count 100000", &log);
  ASSERT_TRUE(code.has_value()) << "still running 60 s after SIGTERM\n" << log;
  EXPECT_EQ(*code, 1) << log;
  EXPECT_NE(log.find("interrupted by a signal: received"), std::string::npos) << log;
  ExpectNoSanitizerReport(log);
}

// `pub` keeps the default disposition: SIGTERM ends it at once (128+15),
// or it has already finished (0); nothing else, and no report.
TEST(PubsubCliSignalTest, PubEndsOnSigtermMidChunkedPublish) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  testing::TempDir dir;
  std::vector<std::string> argv = {Binary(), "pubsub", "pub", "--tenant", kTenant};
  for (int i = 0; i < 12; ++i) {
    std::string path = dir.path() + "/p" + std::to_string(i);
    std::ofstream(path, std::ios::binary) << testutil::RandomBytes(1u << 20, 200 + i);
    argv.insert(argv.end(), {"--payload-file", path});
  }
  testing::Process::Options o;
  o.argv = argv;
  o.env = {{"SERVER_MSGQUEUE_PUBSUB_NATS_URL", server.url()}};
  o.log_path = dir.path() + "/pub.log";
  testing::Process pub(o);
  ASSERT_TRUE(pub.Signal(SIGTERM) || !pub.running());
  auto code = pub.Wait(std::chrono::seconds(60));
  ASSERT_TRUE(code.has_value()) << pub.Log();
  EXPECT_TRUE(*code == 128 + SIGTERM || *code == 0) << *code << "\n" << pub.Log();
  ExpectNoSanitizerReport(pub.Log());
}

}  // namespace
}  // namespace switchboard::pubsub
