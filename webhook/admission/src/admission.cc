// The admission decision. Every access to the request checks the JSON type
// first, so no nlohmann accessor can throw on hostile input; the rule set is
// still called inside a try block, because "never a crash" must not depend
// on another module being exception-free.
#include "switchboard/webhook_admission/admission.h"

#include <exception>
#include <nlohmann/json.hpp>
#include <utility>

#include "switchboard/api/json_depth.h"
#include "switchboard/common/base64.h"

namespace switchboard::webhook_admission {
namespace {

using nlohmann::json;

constexpr const char* kGroup = "pubsub.switchboard.dev";
constexpr const char* kHandled =
    "this webhook handles pubsub.switchboard.dev PubSubBackend and NatsServer only";

// The member `key` of `object` when `object` is an object that has it.
const json* Member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string StringMember(const json& object, const char* key) {
  const json* v = Member(object, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

std::string Dump(const json& value) {
  // replace: a string the rule set cut in the middle of a UTF-8 sequence
  // must not turn into an exception here.
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// A reply to something that is not a usable AdmissionReview: there is no uid
// to echo, so the API server could not use it anyway; HTTP 400 says so.
Outcome BadRequest(std::string message, const std::string& api_version = "admission.k8s.io/v1") {
  Outcome out;
  out.http_status = 400;
  out.result = "error";
  out.message = std::move(message);
  json review = {
      {"apiVersion", api_version},
      {"kind", "AdmissionReview"},
      {"response",
       {{"uid", ""},
        {"allowed", false},
        {"status", {{"code", 400}, {"reason", "BadRequest"}, {"message", out.message}}}}}};
  out.body = Dump(review);
  return out;
}

class Responder {
 public:
  Responder(Outcome* out, std::string api_version, std::string uid)
      : out_(out), api_version_(std::move(api_version)) {
    out_->uid = std::move(uid);
    response_ = {{"uid", out_->uid}, {"allowed", true}};
  }

  void Allow() { out_->result = "allowed"; }

  // A well-formed review this webhook cannot judge (wrong kind, missing
  // object, internal error): allowed=false with a status naming the problem.
  void Fail(int code, const char* reason, std::string message) {
    out_->result = "error";
    out_->message = message;
    response_["allowed"] = false;
    response_["status"] = {{"code", code}, {"reason", reason}, {"message", std::move(message)}};
  }

  void Deny(const rules::Report& report, const json& details) {
    out_->result = "denied";
    std::string message;
    json causes = json::array();
    for (const auto& e : report.errors) {
      if (!message.empty()) message += "; ";
      message += e.ToString();
      causes.push_back(
          {{"reason", "FieldValueInvalid"}, {"field", e.field}, {"message", e.message}});
    }
    out_->message = message;
    json d = details;
    d["causes"] = std::move(causes);
    response_["allowed"] = false;
    // 403 Forbidden, as kubebuilder's Denied(): kubectl then prints
    // "admission webhook ... denied the request: <message>". (422 Invalid
    // would make kubectl print only the causes, hiding that it was us.)
    response_["status"] = {
        {"code", 403}, {"reason", "Forbidden"}, {"message", std::move(message)}, {"details", d}};
  }

  void Warn(const std::vector<rules::Finding>& warnings) {
    if (warnings.empty()) return;
    json list = json::array();
    for (const auto& w : warnings) list.push_back(w.ToString());
    out_->warnings = static_cast<int>(warnings.size());
    response_["warnings"] = std::move(list);
  }

  void Patch(const json& patch) {
    if (!patch.is_array() || patch.empty()) return;
    out_->patched = true;
    response_["patchType"] = "JSONPatch";
    response_["patch"] = base64::Encode(Dump(patch));
  }

  void Finish() {
    json review = {{"apiVersion", api_version_},
                   {"kind", "AdmissionReview"},
                   {"response", std::move(response_)}};
    out_->body = Dump(review);
  }

 private:
  Outcome* out_;
  std::string api_version_;
  json response_;
};

// The object as the rules should see it: the API server may leave
// metadata.namespace (and, with generateName, metadata.name) empty on CREATE
// and pass them beside the object, and defaults such as the NATS username
// depend on them.
// `object` is taken by value: the caller moves it out of the parsed review,
// which is not read again, so no copy is made.
json Completed(json object, const json& request, const std::string& kind) {
  json copy = std::move(object);
  if (!copy.contains("kind")) copy["kind"] = kind;
  if (!copy.contains("apiVersion")) copy["apiVersion"] = std::string(kGroup) + "/v1alpha1";
  json* metadata = &copy["metadata"];
  if (!metadata->is_object()) return copy;  // the rules report it
  for (const char* key : {"namespace", "name"}) {
    std::string value = StringMember(request, key);
    if (!value.empty() && StringMember(*metadata, key).empty()) (*metadata)[key] = value;
  }
  return copy;
}

std::shared_ptr<const ContextSnapshot> EmptySnapshot() {
  static const auto* empty = new std::shared_ptr<const ContextSnapshot>(
      std::make_shared<const ContextSnapshot>(rules::Context{}));
  return *empty;
}

// Where an object without metadata.namespace will live.
std::string DefaultNamespace(const json& request) {
  std::string ns = StringMember(request, "namespace");
  return ns.empty() ? "default" : ns;
}

// Moves request.object and request.oldObject out of `request`.
void Judge(json& request, Webhook webhook, const ContextSource& context, Outcome* out,
           Responder* respond) {
  const json* kind_ref = Member(request, "kind");
  std::string group = kind_ref ? StringMember(*kind_ref, "group") : "";
  std::string kind = kind_ref ? StringMember(*kind_ref, "kind") : "";
  std::string operation = StringMember(request, "operation");
  out->namespace_ = StringMember(request, "namespace");
  out->name = StringMember(request, "name");
  if (operation == "CREATE" || operation == "UPDATE" || operation == "DELETE" ||
      operation == "CONNECT") {
    out->operation = operation;
  }

  if (group != kGroup || (kind != "PubSubBackend" && kind != "NatsServer")) {
    std::string got = kind_ref ? Dump(*kind_ref) : "nothing";
    respond->Fail(400, "BadRequest",
                  std::string(kHandled) + ", got request.kind " + got +
                      "; fix the rules of the webhook configuration");
    return;
  }
  out->kind = kind;

  if (out->operation == "DELETE" || out->operation == "CONNECT") {
    respond->Allow();  // nothing to check; the operator's finalizer cleans up
    return;
  }
  if (out->operation == "other") {
    respond->Fail(400, "BadRequest",
                  "request.operation must be CREATE, UPDATE, DELETE or CONNECT, got " +
                      (Member(request, "operation") ? Dump(request["operation"]) : "nothing"));
    return;
  }
  if (!StringMember(request, "subResource").empty()) {
    respond->Allow();  // status and other subresources are the operator's to write
    return;
  }
  const json* object = Member(request, "object");
  if (object == nullptr || !object->is_object()) {
    respond->Fail(400, "BadRequest", "request.object is missing or not a JSON object");
    return;
  }

  json completed = Completed(std::move(request["object"]), request, kind);
  bool update = out->operation == "UPDATE";
  const json* old = Member(request, "oldObject");
  if (old != nullptr && !old->is_object()) old = nullptr;

  try {
    bool mutating = webhook == Webhook::kMutating;
    if (!mutating && !context.Synced()) {
      // Judging without the full list of existing objects could admit a
      // duplicate prefix; the API server retries (or applies failurePolicy).
      respond->Fail(503, "ServiceUnavailable",
                    "the webhook's cache of existing PubSubBackends and NatsServers has not "
                    "synced yet; retry in a few seconds");
      return;
    }
    // The mutating webhook judges too: the API server checks the CRD schema
    // between mutating and validating admission, so without this its generic
    // message would pre-empt the rule set's (the one `switchboard validate`
    // prints). Before the cache syncs it judges without other objects; the
    // validating webhook still refuses until then.
    std::shared_ptr<const ContextSnapshot> snapshot =
        context.Synced() ? context.Snapshot() : nullptr;
    if (!snapshot) snapshot = EmptySnapshot();
    json old_completed;
    if (update && old != nullptr) {
      old_completed = Completed(std::move(request["oldObject"]), request, kind);
    }
    rules::Report report = rules::Validate(
        completed, snapshot->index(),
        update ? rules::Operation::kUpdate : rules::Operation::kCreate,
        update && old != nullptr ? &old_completed : nullptr, DefaultNamespace(request));
    if (!report.ok()) {
      json details = {{"group", kGroup}, {"kind", kind}, {"name", out->name}};
      // With the denial, the warnings `switchboard validate` shows for the
      // same object: whichever webhook denies is the only one kubectl hears
      // from, so nothing is printed twice.
      respond->Warn(report.warnings);
      respond->Deny(report, details);
      return;
    }
    if (mutating) {
      respond->Patch(rules::DefaultingPatch(completed, DefaultNamespace(request)));
    } else {
      respond->Warn(report.warnings);  // only here, so kubectl does not print them twice
    }
    respond->Allow();
  } catch (const std::exception& e) {
    respond->Fail(
        500, "InternalError",
        std::string("internal error while judging the object (please report it): ") + e.what());
  }
}

}  // namespace

Outcome Review(std::string_view body, Webhook webhook, const ContextSource& context) {
  try {
    if (body.empty()) {
      return BadRequest("request body is empty; expected an AdmissionReview (admission.k8s.io/v1)");
    }
    if (!api::NestingWithin(body, kMaxJsonDepth)) {
      return BadRequest("request body nests JSON deeper than " + std::to_string(kMaxJsonDepth) +
                        " levels; an AdmissionReview is never that deep");
    }
    json review;
    try {
      review = json::parse(body);
    } catch (const json::exception& e) {
      return BadRequest(std::string("request body is not valid JSON: ") + e.what());
    }
    std::string api_version = StringMember(review, "apiVersion");
    if (!review.is_object() || StringMember(review, "kind") != "AdmissionReview" ||
        (api_version != "admission.k8s.io/v1" && api_version != "admission.k8s.io/v1beta1")) {
      return BadRequest(
          "request body must be an AdmissionReview: apiVersion admission.k8s.io/v1 (or v1beta1) "
          "and kind AdmissionReview");
    }
    const json* request = Member(review, "request");
    if (request == nullptr || !request->is_object()) {
      return BadRequest("AdmissionReview.request is missing or not an object", api_version);
    }
    std::string uid = StringMember(*request, "uid");
    if (uid.empty()) {
      return BadRequest("AdmissionReview.request.uid is missing or not a non-empty string",
                        api_version);
    }

    Outcome out;
    Responder respond(&out, api_version, uid);
    Judge(review["request"], webhook, context, &out, &respond);
    respond.Finish();
    return out;
  } catch (const std::exception& e) {
    // Only allocation failure or a bug can get here; still answer.
    return BadRequest(std::string("internal error: ") + e.what());
  }
}

}  // namespace switchboard::webhook_admission
