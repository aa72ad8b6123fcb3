#include "nats_status.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace switchboard::pubsub::internal {
namespace {

bool ContainsNoCase(std::string_view hay, std::string_view needle) {
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
  return it != hay.end();
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
