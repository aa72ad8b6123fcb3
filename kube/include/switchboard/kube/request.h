// Building Kubernetes API requests: paths, query parameters, bodies and
// content types. Pure (no I/O), so it is unit-tested on its own; the
// Transport sends what these build (kube-core / kube-client split).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/kube/options.h"
#include "switchboard/kube/resource.h"

namespace switchboard::kube {

struct HttpRequest {
  std::string method;  // GET, POST, PUT, PATCH, DELETE
  std::string path;    // absolute path plus query: "/api/v1/namespaces/a/secrets?limit=2"
  std::string body;
  std::string content_type;                                  // empty when there is no body
  std::vector<std::pair<std::string, std::string>> headers;  // beyond auth/user-agent
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::vector<std::string> warnings;  // parsed `Warning` header texts
};

namespace request {

// Percent-encodes a query value (RFC 3986 unreserved characters are kept).
std::string QueryEscape(std::string_view value);

// "/api/v1/namespaces/ns/secrets/name/status", "/apis/g/v/plural".
// `ns` is ignored for cluster-scoped resources; empty `ns` on a namespaced
// resource addresses all namespaces (list/watch only).
std::string ResourcePath(const ResourceRef& r, std::string_view ns, std::string_view name = "",
                         std::string_view subresource = "");

std::string_view PatchContentType(PatchType type);
std::string_view PropagationPolicyName(PropagationPolicy p);

HttpRequest Get(const ResourceRef& r, std::string_view ns, std::string_view name);
HttpRequest List(const ResourceRef& r, std::string_view ns, const ListOptions& opts);
HttpRequest Watch(const ResourceRef& r, std::string_view ns, const WatchOptions& opts);
// Namespace comes from `ns` when non-empty, else from obj.metadata.namespace.
HttpRequest Create(const ResourceRef& r, std::string_view ns, const json& obj,
                   const WriteOptions& opts, std::string_view name = "",
                   std::string_view subresource = "");
// PUT to the object's path (name/namespace from its metadata).
HttpRequest Update(const ResourceRef& r, const json& obj, const WriteOptions& opts,
                   std::string_view subresource = "");
// For kJson the patch must be an array; otherwise an object. kInvalidArgument if not.
Result<HttpRequest> Patch(const ResourceRef& r, std::string_view ns, std::string_view name,
                          PatchType type, const json& patch, const PatchOptions& opts);
// Server-side apply of `obj` (name/namespace from its metadata); kInvalidArgument
// when apiVersion, kind or metadata.name is missing or field_manager is empty.
Result<HttpRequest> Apply(const ResourceRef& r, const json& obj, const ApplyOptions& opts,
                          std::string_view subresource = "");
HttpRequest Delete(const ResourceRef& r, std::string_view ns, std::string_view name,
                   const DeleteOptions& opts);

}  // namespace request

// Maps a non-2xx response to a typed Status carrying the server's message:
// the metav1.Status `reason` wins over the HTTP code (NotFound, AlreadyExists,
// Conflict, Invalid/BadRequest, Forbidden, Unauthorized, Gone/Expired,
// Timeout/ServerTimeout, TooManyRequests, ...). A 2xx gives OK.
Status StatusFromResponse(int http_status, std::string_view body);
// Same for a metav1.Status object (a watch ERROR event's payload).
Status StatusFromStatusObject(const json& status_obj, int fallback_http_status = 0);

// Texts from one `Warning` header value: `299 - "text"` (RFC 7234), possibly
// several separated by commas. Unparseable input is returned as is.
std::vector<std::string> ParseWarningHeader(std::string_view value);

}  // namespace switchboard::kube
