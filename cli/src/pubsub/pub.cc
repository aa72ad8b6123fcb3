// `switchboard pubsub pub`: publish one Hatchet message.
#include "common.h"
#include "subcommands.h"
#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::cli::pubsub {

namespace ps = switchboard::pubsub;

int RunPub(const std::vector<std::string>& args) {
  flags::FlagSet flags(
      "Usage: switchboard pubsub pub (--tenant UUID | --scheduler ID | --topic NAME) [flags] "
      "[PAYLOAD...]\n\n"
      "Publishes one Hatchet message and waits for the server's verdict: exits 0 once the\n"
      "server has accepted it, 1 with the server's message when it refused it (e.g. a\n"
      "permissions violation: the user may not publish under this prefix).\n\n"
      "Each PAYLOAD argument, --payload and --payload-file (\"-\" reads stdin) adds one\n"
      "payload; payloads are usually JSON. The message carries published_at (the time of\n"
      "publishing, RFC 3339 with nanoseconds), like every message the engine publishes.\n\n"
      "Payloads are sent uncompressed, as the engine's NATS backend sends them. With\n"
      "--compress each payload is gzipped (one gzip stream per payload, \"compressed\": true)\n"
      "when they total at least --compression-threshold bytes and every payload comes out\n"
      "smaller; otherwise the message goes out as it was. Subscribers (the engine and\n"
      "`switchboard pubsub sub`) decompress either way.\n\n" +
      std::string(ConnectionFlags::EnvHelp()));
  ConnectionFlags conn;
  TopicFlags topic_flags;
  std::string id = "switchboard-cli", tenant_id;
  std::vector<std::string> payloads, payload_files, positional;
  bool compress = false, no_compress = false, persistent = false, immediately_expire = false;
  int64_t retries = 0, threshold = static_cast<int64_t>(ps::kDefaultCompressionThreshold);
  conn.Register(&flags);
  topic_flags.Register(&flags);
  flags.String("id", &id, "message id, e.g. task-completed (default switchboard-cli)");
  flags.String("tenant-id", &tenant_id, "tenant_id field (default: --tenant, else the nil UUID)");
  flags.Strings("payload", &payloads, "a payload (repeatable)");
  flags.Strings("payload-file", &payload_files,
                "a payload read from a file, - for stdin (repeatable)");
  flags.Bool("compress", &compress, "gzip the payloads (see above)");
  flags.Bool("no-compress", &no_compress, "send the payloads uncompressed (the default)");
  flags.Int("compression-threshold", &threshold,
            "with --compress: gzip when payloads total at least N bytes (default 5120)");
  flags.Int("retries", &retries, "retries field");
  flags.Bool("persistent", &persistent, "persistent field");
  flags.Bool("immediately-expire", &immediately_expire, "immediately_expire field");
  flags.Duration("timeout", &conn.timeout,
                 "connect timeout, and how long to wait for the server's verdict (default 5s)");
  flags.Positional(&positional);
  if (int rc = ParseOrExit(&flags, args, "pub"); rc >= 0) return rc;

  auto topic = topic_flags.Resolve();
  if (!topic.ok()) return Fail("pub", topic.status(), kExitUsage);
  ps::Message m;
  m.id = id;
  m.payloads.emplace();
  for (const auto& p : positional) m.payloads->push_back(p);
  for (const auto& p : payloads) m.payloads->push_back(p);
  for (const auto& f : payload_files) {
    auto data = ReadFileOrStdin(f);
    if (!data.ok()) return Fail("pub", data.status(), kExitUsage);
    m.payloads->push_back(std::move(data).value());
  }
  if (m.payloads->empty()) {
    return Fail("pub",
                Status::InvalidArgument(
                    "give at least one payload (argument, --payload or --payload-file)"),
                kExitUsage);
  }
  if (!tenant_id.empty()) {
    auto t = ps::Topic::TenantStream(tenant_id);
    if (!t.ok()) return Fail("pub", t.status().Annotate("--tenant-id"), kExitUsage);
    m.tenant_id = t->name.substr(0, t->name.size() - 3);
  } else if (!topic_flags.tenant.empty()) {
    m.tenant_id = topic->name.substr(0, topic->name.size() - 3);  // strip "_v1"
  }
  m.retries = retries;
  m.persistent = persistent;
  m.immediately_expire = immediately_expire;
  if (compress && no_compress) {
    return Fail("pub", Status::InvalidArgument("give at most one of --compress and --no-compress"),
                kExitUsage);
  }
  if (threshold < 0)
    return Fail("pub", Status::InvalidArgument("--compression-threshold: must be >= 0"),
                kExitUsage);

  QuietLogs();
  ps::NatsOptions options = conn.ToOptions();
  options.compression = compress;
  options.compression_threshold = static_cast<size_t>(threshold);
  auto client = ps::NatsPubSub::Connect(options);
  if (!client.ok()) return Fail("pub", client.status());
  // Stamped at publish, as the engine's instrumented pub/sub does for every
  // message (its transit-time histogram reads it): RFC 3339 with
  // nanoseconds, UTC.
  m.published_at = ps::Timestamp::Now();
  if (Status s = (*client)->Publish(*topic, m); !s.ok()) return Fail("pub", s);
  // NATS refuses a publish asynchronously: success is claimed only after
  // the server's verdict (a round trip, then the connection's last error).
  if (Status s = (*client)->Confirm(conn.timeout); !s.ok()) return Fail("pub", s);
  std::fprintf(stderr, "published %zu payload(s) to %s.%s\n", m.payloads->size(),
               options.subject_prefix.c_str(), topic->name.c_str());
  return kExitOk;
}

}  // namespace switchboard::cli::pubsub
