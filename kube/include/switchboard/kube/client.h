// A small Kubernetes API client: typed errors, timeouts on every call,
// objects as nlohmann::json. Thread-safe: one Client serves all threads.
//
// Every call returns the server's object (or List / Status) on success and a
// typed Status on failure:
//   kNotFound, kAlreadyExists, kConflict (stale resourceVersion, failed
//   precondition, apply conflict), kInvalidArgument (Invalid, BadRequest),
//   kPermissionDenied (Forbidden), kUnauthenticated, kGone (410, Expired
//   continue token), kTimeout (server Timeout or local deadline),
//   kResourceExhausted (429), kUnavailable (network, 503), kInternal.
// The message is the server's Status message (e.g. `secrets "x" not found`).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "switchboard/common/status.h"
#include "switchboard/kube/config.h"
#include "switchboard/kube/options.h"
#include "switchboard/kube/request.h"
#include "switchboard/kube/resource.h"
#include "switchboard/kube/transport.h"
#include "switchboard/kube/watch.h"

namespace switchboard::kube {

class Client {
 public:
  // Builds the real transport; fails on unreadable keys/certs.
  static Result<std::unique_ptr<Client>> New(const Config& config);
  // With a given transport (tests of code above the client).
  Client(Config config, std::unique_ptr<Transport> transport);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const Config& config() const { return config_; }

  // Called with each admission/deprecation warning of every call (in
  // addition to CallOptions::warnings). Set before sharing the client.
  void SetWarningHandler(std::function<void(const std::string&)> handler);

  Result<json> Get(const ResourceRef& r, std::string_view ns, std::string_view name,
                   const CallOptions& call = {});
  // Subresource read, e.g. "status" or "scale".
  Result<json> GetSubresource(const ResourceRef& r, std::string_view ns, std::string_view name,
                              std::string_view subresource, const CallOptions& call = {});

  // One page: a List object; metadata.continue is set when there is more.
  Result<json> List(const ResourceRef& r, std::string_view ns, const ListOptions& opts = {},
                    const CallOptions& call = {});
  // Follows `continue` until done (page size opts.limit, 0: 500). Returns a
  // List whose items are all pages' items and whose metadata.resourceVersion
  // is the snapshot's version (usable to start a watch). The deadline applies
  // per page. A page answered 410 Expired gives kGone: relist from scratch.
  // `each_item` (may be empty) edits each item as its page arrives, so a
  // caller that keeps only part of each object never holds every page whole.
  Result<json> ListAll(const ResourceRef& r, std::string_view ns, ListOptions opts = {},
                       const CallOptions& call = {},
                       const std::function<void(json&)>& each_item = {});

  // POST. The namespace comes from obj.metadata.namespace (required for
  // namespaced resources: kInvalidArgument when missing). Returns the
  // created object as the server stored it (defaults applied, uid, rv).
  Result<json> Create(const ResourceRef& r, const json& obj, const WriteOptions& opts = {},
                      const CallOptions& call = {});
  // POST to a subresource (e.g. serviceaccounts/<name>/token with a TokenRequest).
  Result<json> CreateSubresource(const ResourceRef& r, std::string_view ns, std::string_view name,
                                 std::string_view subresource, const json& body,
                                 const CallOptions& call = {});
  // PUT. obj.metadata.resourceVersion (when set) makes it optimistic: a
  // stale one gives kConflict.
  Result<json> Update(const ResourceRef& r, const json& obj, const WriteOptions& opts = {},
                      const CallOptions& call = {});
  // PUT to the status subresource (only .status changes).
  Result<json> UpdateStatus(const ResourceRef& r, const json& obj, const WriteOptions& opts = {},
                            const CallOptions& call = {});
  Result<json> Patch(const ResourceRef& r, std::string_view ns, std::string_view name,
                     PatchType type, const json& patch, const PatchOptions& opts = {},
                     const CallOptions& call = {});
  // Server-side apply (idempotent: applying the same object twice leaves the
  // resourceVersion unchanged). A field owned by another manager gives
  // kConflict unless opts.force.
  Result<json> Apply(const ResourceRef& r, const json& obj, const ApplyOptions& opts = {},
                     const CallOptions& call = {});
  // Server-side apply of the status subresource.
  Result<json> ApplyStatus(const ResourceRef& r, const json& obj, const ApplyOptions& opts = {},
                           const CallOptions& call = {});
  // Returns the server's answer (the object, still present with a
  // deletionTimestamp when finalizers hold it, or a Status).
  Result<json> Delete(const ResourceRef& r, std::string_view ns, std::string_view name,
                      const DeleteOptions& opts = {}, const CallOptions& call = {});

  // Streaming watch. Calls `on_event` for each event in order (bookmarks
  // included; ERROR events carry a Status, e.g. kGone for "too old resource
  // version") until the server ends the stream (returns OK), on_event
  // returns false (OK), `cancel` is cancelled (OK), or a failure (the Status;
  // a non-2xx answer maps like other calls). call.timeout bounds the wait
  // between chunks; zero: opts.timeout_seconds plus a margin. `on_event`
  // may take the event's object (it is not read again).
  Status Watch(const ResourceRef& r, std::string_view ns, const WatchOptions& opts,
               const std::function<bool(WatchEvent&)>& on_event, Cancellation* cancel = nullptr,
               const CallOptions& call = {});

  // Any request, e.g. discovery. The body is parsed as JSON (null when empty).
  Result<json> Raw(const HttpRequest& req, const CallOptions& call = {});

 private:
  // `keep_items`: parse each of a List's items keeping only those members.
  Result<json> Do(const HttpRequest& req, const CallOptions& call,
                  const FieldMask* keep_items = nullptr);

  Config config_;
  std::unique_ptr<Transport> transport_;
  std::function<void(const std::string&)> warning_handler_;
};

}  // namespace switchboard::kube
