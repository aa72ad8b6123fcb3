// Private: the two parsers behind LoadDocuments. Each appends documents (lists
// not yet expanded; `item_lines` carries the line of each element of a
// top-level `items` sequence) and stops at the first error.
#pragma once

#include <string_view>
#include <vector>

#include "switchboard/api/documents.h"

namespace switchboard::api::internal {

struct RawDocument {
  nlohmann::json value;
  int line = 1;
  std::vector<int> item_lines;
};

struct RawResult {
  std::vector<RawDocument> documents;
  Status status;
  int error_line = 0;
  // LoadJson only: the text starts like JSON but is not (bare words, single
  // quotes, comments), so it is YAML flow style; nothing was loaded.
  bool not_json = false;
};

RawResult LoadYaml(std::string_view text, const LoadOptions& options);
RawResult LoadJson(std::string_view text, const LoadOptions& options);

}  // namespace switchboard::api::internal
