// Pure request building.
#include "switchboard/kube/request.h"

namespace switchboard::kube::request {

namespace {

// Appends "&k=v" (or "?k=v" for the first parameter).
void AddParam(std::string* path, std::string_view k, std::string_view v) {
  path->push_back(path->find('?') == std::string::npos ? '?' : '&');
  path->append(k);
  path->push_back('=');
  path->append(QueryEscape(v));
}

void AddWriteParams(std::string* path, const std::string& field_manager, bool dry_run) {
  if (dry_run) AddParam(path, "dryRun", "All");
  if (!field_manager.empty()) AddParam(path, "fieldManager", field_manager);
}

std::string NamespaceFor(std::string_view ns, const json& obj) {
  if (!ns.empty()) return std::string(ns);
  return NamespaceOf(obj);
}

}  // namespace

std::string QueryEscape(std::string_view value) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (unsigned char c : value) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string ResourcePath(const ResourceRef& r, std::string_view ns, std::string_view name,
                         std::string_view subresource) {
  std::string p = r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
  if (r.namespaced && !ns.empty()) {
    p += "/namespaces/";
    p += QueryEscape(ns);
  }
  p += "/";
  p += r.plural;
  if (!name.empty()) {
    p += "/";
    p += QueryEscape(name);
    if (!subresource.empty()) {
      p += "/";
      p += subresource;
    }
  }
  return p;
}

std::string_view PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kApply:
      return "application/apply-patch+yaml";
  }
  return "application/merge-patch+json";
}

std::string_view PropagationPolicyName(PropagationPolicy p) {
  switch (p) {
    case PropagationPolicy::kOrphan:
      return "Orphan";
    case PropagationPolicy::kBackground:
      return "Background";
    case PropagationPolicy::kForeground:
      return "Foreground";
  }
  return "Background";
}

HttpRequest Get(const ResourceRef& r, std::string_view ns, std::string_view name) {
  return {"GET", ResourcePath(r, ns, name), "", "", {}};
}

HttpRequest List(const ResourceRef& r, std::string_view ns, const ListOptions& opts) {
  HttpRequest req{"GET", ResourcePath(r, ns), "", "", {}};
  if (!opts.label_selector.empty()) AddParam(&req.path, "labelSelector", opts.label_selector);
  if (!opts.field_selector.empty()) AddParam(&req.path, "fieldSelector", opts.field_selector);
  if (opts.limit > 0) AddParam(&req.path, "limit", std::to_string(opts.limit));
  if (!opts.continue_token.empty()) AddParam(&req.path, "continue", opts.continue_token);
  if (!opts.resource_version.empty()) {
    AddParam(&req.path, "resourceVersion", opts.resource_version);
  }
  return req;
}

HttpRequest Watch(const ResourceRef& r, std::string_view ns, const WatchOptions& opts) {
  HttpRequest req{"GET", ResourcePath(r, ns), "", "", {}};
  AddParam(&req.path, "watch", "true");
  if (!opts.label_selector.empty()) AddParam(&req.path, "labelSelector", opts.label_selector);
  if (!opts.field_selector.empty()) AddParam(&req.path, "fieldSelector", opts.field_selector);
  if (!opts.resource_version.empty()) {
    AddParam(&req.path, "resourceVersion", opts.resource_version);
  }
  if (opts.allow_watch_bookmarks) AddParam(&req.path, "allowWatchBookmarks", "true");
  if (opts.timeout_seconds > 0) {
    AddParam(&req.path, "timeoutSeconds", std::to_string(opts.timeout_seconds));
  }
  return req;
}

HttpRequest Create(const ResourceRef& r, std::string_view ns, const json& obj,
                   const WriteOptions& opts, std::string_view name, std::string_view subresource) {
  HttpRequest req{"POST",
                  ResourcePath(r, NamespaceFor(ns, obj), name, subresource),
                  obj.dump(),
                  "application/json",
                  {}};
  AddWriteParams(&req.path, opts.field_manager, opts.dry_run);
  return req;
}

HttpRequest Update(const ResourceRef& r, const json& obj, const WriteOptions& opts,
                   std::string_view subresource) {
  HttpRequest req{"PUT",
                  ResourcePath(r, NamespaceOf(obj), NameOf(obj), subresource),
                  obj.dump(),
                  "application/json",
                  {}};
  AddWriteParams(&req.path, opts.field_manager, opts.dry_run);
  return req;
}

Result<HttpRequest> Patch(const ResourceRef& r, std::string_view ns, std::string_view name,
                          PatchType type, const json& patch, const PatchOptions& opts) {
  if (name.empty()) return Status::InvalidArgument("patch: name is empty");
  if (type == PatchType::kJson && !patch.is_array()) {
    return Status::InvalidArgument(
        "patch: a JSON patch (RFC 6902) must be an array of operations like "
        "[{\"op\":\"replace\",\"path\":\"/spec/x\",\"value\":1}]");
  }
  if (type != PatchType::kJson && !patch.is_object()) {
    return Status::InvalidArgument("patch: a merge or apply patch must be a JSON object");
  }
  if (type == PatchType::kApply && opts.field_manager.empty()) {
    return Status::InvalidArgument("patch: server-side apply needs a field manager");
  }
  HttpRequest req{"PATCH",
                  ResourcePath(r, ns, name, opts.subresource),
                  patch.dump(),
                  std::string(PatchContentType(type)),
                  {}};
  AddWriteParams(&req.path, opts.field_manager, opts.dry_run);
  if (type == PatchType::kApply && opts.force) AddParam(&req.path, "force", "true");
  return req;
}

Result<HttpRequest> Apply(const ResourceRef& r, const json& obj, const ApplyOptions& opts,
                          std::string_view subresource) {
  if (!obj.is_object()) return Status::InvalidArgument("apply: the object must be a JSON object");
  if (!obj.contains("apiVersion") || !obj.contains("kind")) {
    return Status::InvalidArgument("apply: the object needs apiVersion and kind (e.g. \"" +
                                   r.ApiVersion() + "\", \"" + r.kind + "\")");
  }
  std::string name = NameOf(obj);
  if (name.empty()) return Status::InvalidArgument("apply: metadata.name is required");
  std::string ns = NamespaceOf(obj);
  if (r.namespaced && ns.empty()) {
    return Status::InvalidArgument("apply: metadata.namespace is required for " +
                                   r.GroupResource());
  }
  PatchOptions po;
  po.field_manager = opts.field_manager;
  po.force = opts.force;
  po.dry_run = opts.dry_run;
  po.subresource = std::string(subresource);
  return Patch(r, ns, name, PatchType::kApply, obj, po);
}

HttpRequest Delete(const ResourceRef& r, std::string_view ns, std::string_view name,
                   const DeleteOptions& opts) {
  json body = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (opts.precondition_uid || opts.precondition_resource_version) {
    json pre = json::object();
    if (opts.precondition_uid) pre["uid"] = *opts.precondition_uid;
    if (opts.precondition_resource_version) {
      pre["resourceVersion"] = *opts.precondition_resource_version;
    }
    body["preconditions"] = pre;
  }
  if (opts.propagation_policy) {
    body["propagationPolicy"] = std::string(PropagationPolicyName(*opts.propagation_policy));
  }
  if (opts.grace_period_seconds) body["gracePeriodSeconds"] = *opts.grace_period_seconds;
  if (opts.dry_run) body["dryRun"] = json::array({"All"});
  return {"DELETE", ResourcePath(r, ns, name), body.dump(), "application/json", {}};
}

}  // namespace switchboard::kube::request
