// Private: collects findings into a Report, tagging each with its rule id.
#pragma once

#include <string>
#include <string_view>

#include "switchboard/rules/validate.h"

namespace switchboard::rules::internal {

class Sink {
 public:
  explicit Sink(Report* report) : report_(report) {}

  void Error(std::string_view rule, std::string field, std::string message) {
    report_->errors.push_back({std::move(field), std::move(message), std::string(rule)});
  }
  void Warn(std::string_view rule, std::string field, std::string message) {
    report_->warnings.push_back({std::move(field), std::move(message), std::string(rule)});
  }
  size_t errors() const { return report_->errors.size(); }
  size_t warnings() const { return report_->warnings.size(); }

 private:
  Report* report_;
};

// "\"value\"" with '"', '\\' and every character a reader cannot see
// escaped (api::EscapeInvisible) and values over 80 characters cut, for
// quoting user input inside messages: a line separator or a bidi control in
// a value must not break or reorder the message around it.
std::string Quote(std::string_view value);

// Name of a JSON type as a user sees it in YAML ("a string", "a number").
std::string TypeName(const nlohmann::json& v);

}  // namespace switchboard::rules::internal
