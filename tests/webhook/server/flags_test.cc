#include "switchboard/webhook_server/flags.h"

#include <gtest/gtest.h>

namespace switchboard::webhook_server {
namespace {

TEST(Flags, ParsesEveryFlagInBothSpellings) {
  auto f = ParseFlags({"--tls-cert-file", "c.pem", "--tls-key-file=k.pem", "--port", "8443",
                       "--bind-address=127.0.0.1", "--metrics-port", "0", "--kubeconfig", "kc",
                       "--max-body-bytes=65536", "--worker-threads", "4", "--log-level", "debug"});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->tls_cert_file, "c.pem");
  EXPECT_EQ(f->tls_key_file, "k.pem");
  EXPECT_EQ(f->port, 8443);
  EXPECT_EQ(f->bind_address, "127.0.0.1");
  EXPECT_EQ(f->metrics_port, 0);
  EXPECT_EQ(f->kubeconfig, "kc");
  EXPECT_EQ(f->max_body_bytes, 65536u);
  EXPECT_EQ(f->worker_threads, 4);
  EXPECT_EQ(f->log_level, "debug");
}

TEST(Flags, LimitsAndDeadlines) {
  auto f = ParseFlags({"--tls-cert-file=c", "--tls-key-file=k", "--max-connections", "64",
                       "--request-timeout=2500ms", "--idle-timeout", "2m", "--worker-threads=0"});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->max_connections, 64);
  EXPECT_EQ(f->request_timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(f->idle_timeout, std::chrono::minutes(2));
  EXPECT_EQ(f->worker_threads, 0);
}

TEST(Flags, Defaults) {
  auto f = ParseFlags({"--tls-cert-file=c", "--tls-key-file=k"});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->port, 9443);
  EXPECT_EQ(f->metrics_port, 8080);
  EXPECT_EQ(f->bind_address, "0.0.0.0");
  EXPECT_EQ(f->max_body_bytes, 4u << 20);
  EXPECT_EQ(f->max_connections, 1024);
  EXPECT_EQ(f->request_timeout, std::chrono::seconds(10));
  EXPECT_EQ(f->idle_timeout, std::chrono::seconds(60));
}

TEST(Flags, HelpNeedsNothingElse) {
  auto f = ParseFlags({"--help"});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->help);
  EXPECT_NE(Usage().find("--max-body-bytes"), std::string::npos);
}

TEST(Flags, ErrorsNameTheFlag) {
  struct Bad {
    std::vector<std::string> args;
    std::string has;
  };
  for (const auto& b : std::vector<Bad>{
           {{"--tls-key-file=k"}, "--tls-cert-file"},
           {{"--tls-cert-file=c", "--tls-key-file=k", "--port=70000"}, "--port"},
           {{"--tls-cert-file=c", "--tls-key-file=k", "--port=x"}, "--port"},
           {{"--tls-cert-file=c", "--tls-key-file=k", "--max-body-bytes=10"}, "--max-body-bytes"},
           {{"--tls-cert-file=c", "--tls-key-file=k", "--nope"}, "unknown flag --nope"},
           {{"--tls-cert-file"}, "needs a value"},
           {{"--tls-cert-file=c", "--tls-key-file=k", "--request-timeout=10"}, "--request-timeout"},
           {{"--tls-cert-file=c", "--tls-key-file=k", "--idle-timeout=0s"}, "--idle-timeout"},
           {{"--tls-cert-file=c", "--tls-key-file=k", "--max-connections=0"}, "--max-connections"},
           {{"stray"}, "unexpected argument"},
       }) {
    auto f = ParseFlags(b.args);
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.status().message().find(b.has), std::string::npos) << f.status().message();
  }
}

}  // namespace
}  // namespace switchboard::webhook_server
