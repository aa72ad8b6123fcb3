// Private: the rule groups Validate() runs. Each takes the defaulted object
// (see defaults.cc) and adds findings; none throws, whatever the JSON shape.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sink.h"
#include "switchboard/api/text.h"
#include "switchboard/api/views.h"

namespace switchboard::rules::internal {

class CrossIndex;

// Field names and types against the CRD schema: unknown fields (with a
// "did you mean"), wrong types, required members. Returns false when the
// object is too malformed for the semantic rules (not an object, no spec).
bool CheckSchema(const nlohmann::json& object, Sink& sink);

// apiVersion, metadata.name/namespace.
void CheckMetadata(const nlohmann::json& object, Sink& sink);

void CheckBackend(const nlohmann::json& object, const nlohmann::json& original, Sink& sink);
void CheckServer(const nlohmann::json& object, Sink& sink);

// `field` is where the value lives ("spec.url"); seeds are comma-separated.
void CheckNatsUrls(std::string_view urls, const std::string& field, Sink& sink);
void CheckSubjectPrefix(std::string_view prefix, const std::string& field, Sink& sink);

// A byte count or quantity in the CRD's form (bytes); nullopt, with an
// error, when it does not parse, and without one when absent or of a type
// the schema reports.
std::optional<int64_t> ByteQuantity(const nlohmann::json* v, const std::string& field, Sink& sink);
// {maxConnections, maxSubscriptions, maxPayload} at `field` ("spec.nats.limits"):
// each value's own check (api/values.h); returns the values that passed.
api::InstallationLimits CheckLimitsBlock(const nlohmann::json* block, const std::string& field,
                                         Sink& sink);
// Whether any of the three is written (valid or not).
bool LimitsSet(const nlohmann::json* block);

void CheckBackendUpdate(const nlohmann::json& object, const nlohmann::json& old, Sink& sink);
void CheckServerUpdate(const nlohmann::json& object, const nlohmann::json& old, Sink& sink);

// The object with defaults, judged in `default_namespace` when it has none
// (metadata.namespace is set in the copy so keys and defaults agree). Of
// metadata only name, generateName, namespace and uid are copied: no rule
// reads the rest (labels, annotations, managedFields).
nlohmann::json DefaultedForValidation(const nlohmann::json& object,
                                      const std::string& default_namespace);

}  // namespace switchboard::rules::internal
