// NatsServer spec.url: the comma-separated seed list the engine receives as
// SERVER_MSGQUEUE_PUBSUB_NATS_URL and the operator's probe dials.
//
// Accepted: nats:// and tls:// (case-insensitive), a host name, IPv4 or
// [IPv6] address, an optional port 1-65535 (default 4222). Rejected: ws://
// and wss:// (the operator probes with nats.c, which has no websocket
// transport), paths, queries, fragments and user info: credentials are
// generated per installation (spec.nats.credentials of each PubSubBackend).
#include <cctype>
#include <set>

#include "rules.h"
#include "switchboard/api/constants.h"

namespace switchboard::rules::internal {
namespace {

std::string Ports() { return "1-" + std::to_string(api::kMaxPort); }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool HostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_';
}

// Checks one seed; returns a normalized form for duplicate detection, or ""
// after reporting an error.
std::string CheckSeed(std::string_view seed, size_t n, const std::string& field, Sink& sink) {
  const std::string which = "seed " + std::to_string(n);
  auto err = [&](std::string msg) {
    sink.Error("nats-url", field, which + " " + msg);
    return std::string();
  };
  size_t sep = seed.find("://");
  // Never echo a seed that carries user info: it may hold a password.
  bool has_userinfo = false;
  {
    std::string_view after = sep == std::string_view::npos ? seed : seed.substr(sep + 3);
    size_t end = after.find_first_of("/?#");
    has_userinfo = after.substr(0, end).find('@') != std::string_view::npos ||
                   seed.find('@') != std::string_view::npos;
  }
  if (has_userinfo) {
    return err(
        "embeds credentials (user[:password]@host); remove them from the URL: each "
        "PubSubBackend gets its own user through spec.nats.credentials");
  }
  const std::string q = Quote(seed);
  if (sep == std::string_view::npos) {
    return err(q + " has no scheme; write nats://" + std::string(seed) + " (or tls:// for TLS)");
  }
  std::string scheme = Lower(seed.substr(0, sep));
  if (scheme == "ws" || scheme == "wss") {
    return err(q + " uses websockets (" + scheme +
               "://), which the operator's probe cannot dial; use the server's client port "
               "with nats:// or tls://");
  }
  if (scheme != "nats" && scheme != "tls") {
    return err(q + " has scheme " + Quote(scheme) + "; use nats:// or tls://");
  }
  std::string_view rest = seed.substr(sep + 3);
  size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  if (end != std::string_view::npos) {
    std::string_view tail = rest.substr(end);
    if (tail == "/") {
      return err(q + " ends with '/'; remove it (scheme://host:port only)");
    } else if (tail[0] == '/') {
      return err(q + " has a path; NATS URLs are host:port only: remove " + Quote(tail));
    } else {
      return err(q + " has a query or fragment; remove " + Quote(tail));
    }
  }
  std::string_view host, port;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return err(q + " has an unclosed '[' in its IPv6 host");
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return err(q + " has text after the IPv6 address; write [addr]:port");
      port = after.substr(1);
      if (port.empty())
        return err(q + " has an empty port; write a port " + Ports() + " or omit ':'");
    }
    if (host.empty()) return err(q + " has no host; write nats://host:4222");
    for (char c : host) {
      bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
      if (!hex && c != ':' && c != '.' && c != '%') {
        return err(q + " has an invalid IPv6 address; write [addr]:port");
      }
    }
  } else {
    size_t colon = authority.rfind(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty())
        return err(q + " has an empty port; write a port " + Ports() + " or omit ':'");
    }
    if (host.empty()) return err(q + " has no host; write nats://host:4222");
    // As the CRD: dot-separated labels of [A-Za-z0-9_-], each starting and
    // ending with a letter or digit.
    bool ok = true;
    size_t start = 0;
    while (ok) {
      size_t dot = host.find('.', start);
      std::string_view label =
          host.substr(start, dot == std::string_view::npos ? dot : dot - start);
      ok = !label.empty() && std::isalnum(static_cast<unsigned char>(label.front())) &&
           std::isalnum(static_cast<unsigned char>(label.back()));
      for (char c : label) ok = ok && HostChar(c) && c != '.';
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
    if (!ok) {
      return err(q + " has an invalid host " + Quote(host) +
                 "; use a DNS name or an IP address (IPv6 in brackets)");
    }
  }
  if (!port.empty()) {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) {
      return err(q + " has an invalid port " + Quote(port) + "; use a number " + Ports());
    }
    int p = std::stoi(std::string(port));
    if (p < 1 || p > api::kMaxPort) {
      return err(q + " has port " + std::to_string(p) + " outside " + Ports());
    }
  }
  return scheme + "://" + Lower(host) + ":" +
         (port.empty() ? std::to_string(api::kDefaultNatsPort) : std::string(port));
}

}  // namespace

void CheckNatsUrls(std::string_view urls, const std::string& field, Sink& sink) {
  if (Trim(urls).empty()) {
    sink.Error("nats-url", field,
               "must not be empty; write nats://host:4222 (comma-separated seeds)");
    return;
  }
  if (urls.size() > api::kMaxNatsUrlLength) {
    sink.Error("nats-url", field,
               "is " + std::to_string(urls.size()) + " characters, more than " +
                   std::to_string(api::kMaxNatsUrlLength) +
                   " (the CRD's bound); list fewer seeds: the server gossips the rest of its "
                   "cluster to clients");
    return;
  }
  std::set<std::string> seen;
  size_t n = 1, start = 0;
  while (true) {
    size_t comma = urls.find(',', start);
    std::string_view seed = Trim(urls.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (seed.empty()) {
      sink.Error("nats-url", field,
                 "seed " + std::to_string(n) + " is empty; remove the extra ',' between seeds");
    } else {
      std::string norm = CheckSeed(seed, n, field, sink);
      if (!norm.empty() && !seen.insert(norm).second) {
        sink.Warn("nats-url", field,
                  "seed " + std::to_string(n) + " repeats an earlier seed; remove the duplicate");
      }
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
    ++n;
  }
}

}  // namespace switchboard::rules::internal
