// Private: the two parsers behind LoadDocuments. Each hands every document to
// `emit` as soon as it is parsed (lists not yet expanded; `item_lines` carries
// the line of each element of a top-level `items` sequence) and stops at the
// first error.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "switchboard/api/documents.h"

namespace switchboard::api::internal {

struct RawDocument {
  nlohmann::json value;
  int line = 1;
  std::vector<int> item_lines;
};

using Emit = std::function<void(RawDocument&&)>;

struct RawResult {
  Status status;
  int error_line = 0;
  // LoadJson only: the text starts like JSON but is not (bare words, single
  // quotes, comments), so it is YAML flow style; nothing was emitted.
  bool not_json = false;
};

RawResult LoadYaml(std::string_view text, const LoadOptions& options, const Emit& emit);
RawResult LoadJson(std::string_view text, const LoadOptions& options, const Emit& emit);

}  // namespace switchboard::api::internal
