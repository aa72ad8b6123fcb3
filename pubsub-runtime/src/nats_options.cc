#include "nats_options.h"

#include "nats_status.h"

namespace switchboard::pubsub {

std::vector<std::string> SplitUrls(const std::string& urls) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= urls.size()) {
    size_t comma = urls.find(',', start);
    if (comma == std::string::npos) comma = urls.size();
    std::string u = urls.substr(start, comma - start);
    size_t b = u.find_first_not_of(" \t"), e = u.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(u.substr(b, e - b + 1));
    start = comma + 1;
  }
  return out;
}

namespace internal {

Result<NatsOptionsPtr> BuildNatsOptions(const NatsOptions& options) {
  natsOptions* raw_opts = nullptr;
  if (natsOptions_Create(&raw_opts) != NATS_OK)
    return Status::Internal("natsOptions_Create failed");
  NatsOptionsPtr opts(raw_opts);

  auto urls = SplitUrls(options.urls);
  std::vector<const char*> servers;
  bool tls = !options.ca_file.empty() || !options.ca_pem.empty() || !options.cert_file.empty();
  for (const auto& u : urls) {
    servers.push_back(u.c_str());
    if (u.starts_with("tls://")) tls = true;
  }
  auto check = [](natsStatus s, const char* what) {
    return s == NATS_OK ? Status::Ok() : FromNats(s, what);
  };
  SB_RETURN_IF_ERROR(
      check(natsOptions_SetServers(opts.get(), servers.data(), static_cast<int>(servers.size())),
            "urls"));
  if (!options.username.empty()) {
    SB_RETURN_IF_ERROR(check(
        natsOptions_SetUserInfo(opts.get(), options.username.c_str(), options.password.c_str()),
        "username"));
  }
  SB_RETURN_IF_ERROR(check(natsOptions_SetName(opts.get(), options.name.c_str()), "name"));
  SB_RETURN_IF_ERROR(check(natsOptions_SetTimeout(opts.get(), options.connect_timeout.count()),
                           "connect_timeout"));
  // Reconnect forever (unless the owner reconnects itself); never buffer
  // while disconnected (publish fails fast).
  SB_RETURN_IF_ERROR(
      check(natsOptions_SetAllowReconnect(opts.get(), options.reconnect), "reconnect"));
  SB_RETURN_IF_ERROR(check(natsOptions_SetMaxReconnect(opts.get(), -1), "reconnect"));
  SB_RETURN_IF_ERROR(check(natsOptions_SetReconnectWait(opts.get(), options.reconnect_wait.count()),
                           "reconnect_wait"));
  SB_RETURN_IF_ERROR(check(natsOptions_SetReconnectBufSize(opts.get(), 0), "reconnect buffer"));
  if (options.pinned) {
    SB_RETURN_IF_ERROR(check(natsOptions_SetNoRandomize(opts.get(), true), "pinned"));
    SB_RETURN_IF_ERROR(check(natsOptions_SetIgnoreDiscoveredServers(opts.get(), true), "pinned"));
  }
  if (tls) {
    SB_RETURN_IF_ERROR(check(natsOptions_SetSecure(opts.get(), true), "tls"));
    if (!options.ca_file.empty() &&
        natsOptions_LoadCATrustedCertificates(opts.get(), options.ca_file.c_str()) != NATS_OK) {
      return Status::InvalidArgument("ca_file: cannot load CA certificates from " +
                                     options.ca_file);
    }
    if (!options.ca_pem.empty() &&
        natsOptions_SetCATrustedCertificates(opts.get(), options.ca_pem.c_str()) != NATS_OK) {
      return Status::InvalidArgument("ca_pem: the CA bundle is not PEM certificates");
    }
    if (!options.cert_file.empty()) {
      if (natsOptions_LoadCertificatesChain(opts.get(), options.cert_file.c_str(),
                                            options.key_file.c_str()) != NATS_OK) {
        return Status::InvalidArgument("cert_file/key_file: cannot load the client certificate " +
                                       options.cert_file + " with its key");
      }
    }
  }
  return opts;
}

}  // namespace internal

Status ValidateNatsOptions(const NatsOptions& o) {
  auto urls = internal::SplitUrls(o.urls);
  if (urls.empty()) {
    return Status::InvalidArgument(
        "urls: at least one NATS URL is required, e.g. nats://nats:4222");
  }
  for (const auto& u : urls) {
    auto scheme_end = u.find("://");
    std::string scheme = scheme_end == std::string::npos ? "" : u.substr(0, scheme_end);
    if (scheme != "nats" && scheme != "tls") {
      return Status::InvalidArgument(
          "urls: \"" + (u.find('@') == std::string::npos ? u : std::string("<redacted>")) +
          "\" must start with nats:// or tls://");
    }
    std::string rest = u.substr(scheme_end + 3);
    if (rest.find('@') != std::string::npos) {
      return Status::InvalidArgument(
          "urls: credentials must not be embedded in the URL; pass username and password instead");
    }
    if (rest.empty() || rest.front() == ':' || rest.front() == '/') {
      return Status::InvalidArgument("urls: \"" + u + "\" has no host");
    }
  }
  if (o.pinned && urls.size() != 1) {
    return Status::InvalidArgument("urls: a pinned connection takes exactly one URL, got " +
                                   std::to_string(urls.size()));
  }
  SB_RETURN_IF_ERROR(ValidateSubjectPrefix(o.subject_prefix));
  if (o.user_jwt && (!o.username.empty() || !o.password.empty())) {
    return Status::InvalidArgument(
        "user_jwt: a user JWT replaces username and password; set one or the other");
  }
  if (o.user_jwt && (o.user_jwt->jwt.empty() || !o.user_jwt->sign)) {
    return Status::InvalidArgument("user_jwt: needs the JWT and a nonce signer");
  }
  if (o.password.empty() == false && o.username.empty()) {
    return Status::InvalidArgument("username: required when a password is given");
  }
  if (!o.ca_file.empty() && !o.ca_pem.empty()) {
    return Status::InvalidArgument("ca_file/ca_pem: give the CA bundle one way, not both");
  }
  if (o.cert_file.empty() != o.key_file.empty()) {
    return Status::InvalidArgument("cert_file/key_file: a client certificate needs both files");
  }
  if (o.connect_timeout.count() <= 0)
    return Status::InvalidArgument("connect_timeout: must be positive");
  if (o.required_max_payload < 0)
    return Status::InvalidArgument("required_max_payload: must not be negative");
  if (o.max_decompressed_bytes == 0) {
    return Status::InvalidArgument("max_decompressed_bytes: must be positive");
  }
  return Status::Ok();
}

}  // namespace switchboard::pubsub
