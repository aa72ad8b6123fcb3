// Options of Client calls. Plain data; defaults are what a controller wants.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::kube {

class FieldMask;  // field_mask.h

// Every call: deadline and where to put admission warnings.
struct CallOptions {
  // Whole-request deadline; zero means the Config's default timeout.
  std::chrono::milliseconds timeout{0};
  // When set, receives the texts of the response's `Warning` headers
  // (admission/deprecation warnings), appended in order.
  std::vector<std::string>* warnings = nullptr;
};

struct ListOptions {
  std::string label_selector;    // "app=x,tier!=db"
  std::string field_selector;    // "metadata.name=x"
  int64_t limit = 0;             // page size; 0: everything in one response
  std::string continue_token;    // from the previous page's metadata.continue
  std::string resource_version;  // "" (most recent, quorum read) or "0" (any, from cache)
  // Not sent: when set, each item of a page is parsed keeping only these
  // members (ParseMasked); must outlive the call.
  const FieldMask* keep = nullptr;
};

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;  // start after this version; "" = from now (plus synthetic ADDs)
  bool allow_watch_bookmarks = true;
  // Server-side end of the watch (the server closes the stream after it);
  // 0: server default. The client's read timeout is derived from it.
  int64_t timeout_seconds = 290;
  // Not sent: when set, each event's object is parsed keeping only these
  // members (ParseMasked); must outlive the call.
  const FieldMask* keep = nullptr;
};

// Create / Update / UpdateStatus.
struct WriteOptions {
  std::string field_manager;  // empty: the server derives one from the user agent
  bool dry_run = false;       // dryRun=All
};

enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386)
  kJson,            // application/json-patch+json (RFC 6902); the patch is an array
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in types only)
  kApply,           // application/apply-patch+yaml (server-side apply; JSON is valid YAML)
};

struct PatchOptions {
  std::string field_manager;  // required by the server for kApply
  bool force = false;         // kApply only: take ownership of conflicting fields
  bool dry_run = false;
  std::string subresource;  // "" or "status" (or "scale")
};

// Server-side apply. The object must carry apiVersion, kind, metadata.name
// (and metadata.namespace for namespaced resources).
struct ApplyOptions {
  std::string field_manager = "switchboard";
  bool force = false;
  bool dry_run = false;
};

enum class PropagationPolicy { kOrphan, kBackground, kForeground };

struct DeleteOptions {
  // Preconditions: the delete fails with kConflict when they no longer hold.
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  std::optional<PropagationPolicy> propagation_policy;
  std::optional<int64_t> grace_period_seconds;
  bool dry_run = false;
};

}  // namespace switchboard::kube
