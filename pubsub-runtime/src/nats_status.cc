#include "nats_status.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "switchboard/pubsub/connection_limit.h"

namespace switchboard::pubsub::internal {
namespace {

bool ContainsNoCase(std::string_view hay, std::string_view needle) {
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
  return it != hay.end();
}

// nats-server's -ERR texts for a connection refused at a limit, after the
// credentials were accepted: the account's max_connections (across the
// cluster), and the server's own max_connections.
constexpr std::string_view kAccountConnectionsExceeded =
    "maximum account active connections exceeded";
constexpr std::string_view kServerConnectionsExceeded = "maximum connections exceeded";
// nats.c 3.4's text when the server closed the connection after INFO
// without answering CONNECT: what a client sees of the server's own
// max_connections, whose -ERR comes with INFO and is dropped.
constexpr std::string_view kClosedAfterGreeting = "Expected 'PONG', got ''";

// The account's text first: it does not contain the server's.
ConnectionLimit LimitIn(std::string_view text) {
  if (ContainsNoCase(text, kAccountConnectionsExceeded)) return ConnectionLimit::kAccount;
  if (ContainsNoCase(text, kServerConnectionsExceeded)) return ConnectionLimit::kServer;
  return ConnectionLimit::kNone;
}

}  // namespace

Status FromNats(natsStatus s, std::string_view what) {
  std::string text = natsStatus_GetText(s);
  natsStatus last = NATS_OK;
  const char* detail = nats_GetLastError(&last);
  if (detail != nullptr && *detail != '\0' && text.find(detail) == std::string::npos) {
    text += " (";
    text += detail;
    text += ")";
  }
  std::string msg = std::string(what) + ": " + text;
  if (s == NATS_CONNECTION_AUTH_FAILED || ContainsNoCase(text, "authorization violation") ||
      ContainsNoCase(text, "authentication")) {
    return Status::Unauthenticated(msg + "; check the username and password");
  }
  // Refused at a connection limit: nats.c 3.4 reports the account's during
  // connect as NATS_ERR with the server's -ERR text as the last error (the
  // server sends it in answer to CONNECT). The server's own limit is sent
  // with INFO, before CONNECT, and nats.c 3.4 loses that text (below); it
  // is mapped for a client that keeps it.
  const ConnectionLimit limit = LimitIn(text);
  if (limit == ConnectionLimit::kAccount) {
    return Status::ResourceExhausted(
        msg +
        "; the server accepted the credentials but refused the connection at the "
        "account's connection limit (the account's max_connections)");
  }
  if (limit == ConnectionLimit::kServer) {
    return Status::ResourceExhausted(
        msg +
        "; the server refused the connection at its own connection limit (the server's "
        "max_connections)");
  }
  if (s == NATS_PROTOCOL_ERROR && ContainsNoCase(text, kClosedAfterGreeting)) {
    // Not known to be a limit (a server shutting down does the same), so
    // not ResourceExhausted; the hint names the likeliest cause.
    return Status::Internal(msg +
                            "; the server closed the connection before answering CONNECT, as "
                            "nats-server does at its own max_connections");
  }
  switch (s) {
    case NATS_NOT_PERMITTED:
      return Status::PermissionDenied(msg);
    case NATS_NO_SERVER:
    case NATS_IO_ERROR:
    case NATS_CONNECTION_CLOSED:
    case NATS_CONNECTION_DISCONNECTED:
    case NATS_STALE_CONNECTION:
    case NATS_SSL_ERROR:
    case NATS_SECURE_CONNECTION_REQUIRED:
    case NATS_INSUFFICIENT_BUFFER:
      return Status::Unavailable(msg);
    case NATS_TIMEOUT:
      return Status::Timeout(msg);
    case NATS_MAX_PAYLOAD:
      return Status::ResourceExhausted(msg);
    case NATS_INVALID_ARG:
    case NATS_INVALID_SUBJECT:
    case NATS_ADDRESS_MISSING:
      return Status::InvalidArgument(msg);
    default:
      return Status::Internal(msg);
  }
}

}  // namespace switchboard::pubsub::internal

namespace switchboard::pubsub {

// FromNats kept the server's text in the message of every refusal at a
// limit (and its own hints name neither text).
ConnectionLimit ConnectionLimitOf(const Status& status) {
  if (status.code() != StatusCode::kResourceExhausted) return ConnectionLimit::kNone;
  return internal::LimitIn(status.message());
}

}  // namespace switchboard::pubsub
