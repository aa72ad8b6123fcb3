#include "flags.h"

#include "switchboard/pubsub/env.h"

namespace switchboard::cli::pubsub {

void ConnectionFlags::Register(flags::FlagSet* f) {
  f->String("url", &url, "comma-separated NATS seed URLs\n(env SERVER_MSGQUEUE_PUBSUB_NATS_URL)")
      .Metavar("URLS");
  f->String("username", &username, "NATS user (env SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME)")
      .Metavar("USER");
  f->String("password", &password,
            "NATS password (env SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD;\nprefer the env)")
      .Metavar("PASSWORD");
  f->String("prefix", &prefix,
            "subject prefix (env SERVER_MSGQUEUE_PUBSUB_NATS_SUBJECT_PREFIX,\n"
            "default hatchet.pubsub)")
      .Metavar("PREFIX");
  f->String("ca-file", &ca_file, "PEM CA bundle to trust for tls:// servers").Metavar("FILE");
  f->String("cert-file", &cert_file, "PEM client certificate (with --key-file)").Metavar("FILE");
  f->String("key-file", &key_file, "PEM client key").Metavar("FILE");
}

switchboard::pubsub::NatsOptions ConnectionFlags::ToOptions() const {
  namespace ps = switchboard::pubsub;
  ps::ConnectionSettings s = ps::SettingsFromEnv();
  if (!url.empty()) s.urls = url;
  if (!username.empty()) s.username = username;
  if (!password.empty()) s.password = password;
  if (!prefix.empty()) s.subject_prefix = prefix;
  ps::NatsOptions o = ps::ToNatsOptions(s);
  o.ca_file = ca_file;
  o.cert_file = cert_file;
  o.key_file = key_file;
  o.connect_timeout = timeout;
  o.name = "switchboard-cli";
  return o;
}

const char* ConnectionFlags::EnvHelp() {
  return "Connection settings default to the engine's own variables, so an env Secret\n"
         "written for a Hatchet engine works unchanged:\n"
         "  SERVER_MSGQUEUE_PUBSUB_NATS_URL, _USERNAME, _PASSWORD, _SUBJECT_PREFIX";
}

}  // namespace switchboard::cli::pubsub
