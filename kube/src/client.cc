#include "switchboard/kube/client.h"

#include "switchboard/kube/field_mask.h"

namespace switchboard::kube {

Result<std::unique_ptr<Client>> Client::New(const Config& config) {
  auto t = NewHttpTransport(config);
  if (!t.ok()) return t.status();
  return std::make_unique<Client>(config, std::move(t.value()));
}

Client::Client(Config config, std::unique_ptr<Transport> transport)
    : config_(std::move(config)), transport_(std::move(transport)) {}

Client::~Client() = default;

void Client::SetWarningHandler(std::function<void(const std::string&)> handler) {
  warning_handler_ = std::move(handler);
}

Result<json> Client::Do(const HttpRequest& req, const CallOptions& call,
                        const FieldMask* keep_items) {
  auto timeout = call.timeout.count() > 0 ? call.timeout : config_.timeout;
  auto res = transport_->Send(req, timeout);
  if (!res.ok()) return res.status();
  for (const auto& w : res->warnings) {
    if (call.warnings != nullptr) call.warnings->push_back(w);
    if (warning_handler_) warning_handler_(w);
  }
  Status s = StatusFromResponse(res->status, res->body);
  if (!s.ok()) return s;
  if (res->body.empty()) return json(nullptr);
  json body = keep_items != nullptr ? ParseMasked(res->body, *keep_items, "items")
                                    : json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    return Status::Internal(req.method + " " + req.path + ": response is not JSON");
  }
  return body;
}

Result<json> Client::Get(const ResourceRef& r, std::string_view ns, std::string_view name,
                         const CallOptions& call) {
  return Do(request::Get(r, ns, name), call);
}

Result<json> Client::GetSubresource(const ResourceRef& r, std::string_view ns,
                                    std::string_view name, std::string_view subresource,
                                    const CallOptions& call) {
  HttpRequest req{"GET", request::ResourcePath(r, ns, name, subresource), "", "", {}};
  return Do(req, call);
}

Result<json> Client::List(const ResourceRef& r, std::string_view ns, const ListOptions& opts,
                          const CallOptions& call) {
  return Do(request::List(r, ns, opts), call, opts.keep);
}

Result<json> Client::ListAll(const ResourceRef& r, std::string_view ns, ListOptions opts,
                             const CallOptions& call, const std::function<void(json&)>& each_item) {
  if (opts.limit <= 0) opts.limit = 500;
  json all;
  json items = json::array();
  while (true) {
    auto page = List(r, ns, opts, call);
    if (!page.ok()) return page.status();
    json& p = page.value();
    if (auto it = p.find("items"); it != p.end() && it->is_array()) {
      for (auto& item : *it) {
        if (each_item) each_item(item);
        items.push_back(std::move(item));
      }
    }
    std::string cont;
    if (auto m = p.find("metadata"); m != p.end() && m->is_object()) {
      cont = m->value("continue", "");
    }
    if (all.is_null()) {
      all = std::move(p);
      all.erase("items");
    } else if (auto m = p.find("metadata"); m != p.end()) {
      all["metadata"]["resourceVersion"] = m->value("resourceVersion", "");
    }
    if (cont.empty()) break;
    opts.continue_token = cont;
    opts.resource_version.clear();  // not allowed together with continue
  }
  all["items"] = std::move(items);
  if (all.contains("metadata")) {
    all["metadata"].erase("continue");
    all["metadata"].erase("remainingItemCount");
  }
  return all;
}

Result<json> Client::Create(const ResourceRef& r, const json& obj, const WriteOptions& opts,
                            const CallOptions& call) {
  if (r.namespaced && NamespaceOf(obj).empty()) {
    return Status::InvalidArgument("create " + r.GroupResource() +
                                   ": metadata.namespace is required");
  }
  return Do(request::Create(r, "", obj, opts), call);
}

Result<json> Client::CreateSubresource(const ResourceRef& r, std::string_view ns,
                                       std::string_view name, std::string_view subresource,
                                       const json& body, const CallOptions& call) {
  return Do(request::Create(r, ns, body, {}, name, subresource), call);
}

Result<json> Client::Update(const ResourceRef& r, const json& obj, const WriteOptions& opts,
                            const CallOptions& call) {
  if (NameOf(obj).empty()) return Status::InvalidArgument("update: metadata.name is required");
  return Do(request::Update(r, obj, opts), call);
}

Result<json> Client::UpdateStatus(const ResourceRef& r, const json& obj, const WriteOptions& opts,
                                  const CallOptions& call) {
  if (NameOf(obj).empty()) {
    return Status::InvalidArgument("update status: metadata.name is required");
  }
  return Do(request::Update(r, obj, opts, "status"), call);
}

Result<json> Client::Patch(const ResourceRef& r, std::string_view ns, std::string_view name,
                           PatchType type, const json& patch, const PatchOptions& opts,
                           const CallOptions& call) {
  auto req = request::Patch(r, ns, name, type, patch, opts);
  if (!req.ok()) return req.status();
  return Do(req.value(), call);
}

Result<json> Client::Apply(const ResourceRef& r, const json& obj, const ApplyOptions& opts,
                           const CallOptions& call) {
  auto req = request::Apply(r, obj, opts);
  if (!req.ok()) return req.status();
  return Do(req.value(), call);
}

Result<json> Client::ApplyStatus(const ResourceRef& r, const json& obj, const ApplyOptions& opts,
                                 const CallOptions& call) {
  auto req = request::Apply(r, obj, opts, "status");
  if (!req.ok()) return req.status();
  return Do(req.value(), call);
}

Result<json> Client::Delete(const ResourceRef& r, std::string_view ns, std::string_view name,
                            const DeleteOptions& opts, const CallOptions& call) {
  if (name.empty()) return Status::InvalidArgument("delete: name is empty");
  return Do(request::Delete(r, ns, name, opts), call);
}

Result<json> Client::Raw(const HttpRequest& req, const CallOptions& call) { return Do(req, call); }

Status Client::Watch(const ResourceRef& r, std::string_view ns, const WatchOptions& opts,
                     const std::function<bool(WatchEvent&)>& on_event, Cancellation* cancel,
                     const CallOptions& call) {
  std::chrono::milliseconds idle = call.timeout;
  if (idle.count() <= 0) {
    // The server ends the watch after timeout_seconds; allow a margin so a
    // quiet but healthy watch is not cut by our own read timeout.
    int64_t secs = opts.timeout_seconds > 0 ? opts.timeout_seconds : 1800;
    idle = std::chrono::seconds(secs + 30);
  }
  WatchLineDecoder decoder;
  Status parse_error;
  auto res = transport_->Stream(
      request::Watch(r, ns, opts),
      [&](std::string_view chunk) {
        return decoder.Feed(chunk, [&](std::string_view line) {
          auto ev = ParseWatchEvent(line, opts.keep);
          if (!ev.ok()) {
            parse_error = ev.status();
            return false;
          }
          return on_event(ev.value());
        });
      },
      idle, cancel);
  if (!res.ok()) return res.status();
  for (const auto& w : res->warnings) {
    if (call.warnings != nullptr) call.warnings->push_back(w);
    if (warning_handler_) warning_handler_(w);
  }
  if (!parse_error.ok()) return parse_error;
  if (res->status != 0 && (res->status < 200 || res->status >= 300)) {
    return StatusFromResponse(res->status, res->body);
  }
  return Status::Ok();
}

}  // namespace switchboard::kube
