// Manifest loading: the documents of a YAML or JSON text as nlohmann::json,
// each with the line it starts on, the way kubectl reads them. Pure except
// for ReadFileText/ReadStreamText, which read only what they are given.
#pragma once

#include <cstddef>
#include <functional>
#include <istream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/common/status.h"

namespace switchboard::api {

struct Document {
  nlohmann::json value;
  int line = 1;   // 1-based line of the document's first node (of the item, for List items)
  int index = 0;  // 0-based position among the text's non-empty documents
  int item = -1;  // position in a List's items; -1 when not from a List
};

struct LoadOptions {
  // `kind: List` (or any kind ending in "List") with an `items` array becomes
  // one Document per item, each with its own line.
  bool expand_lists = true;
  // YAML aliases may expand to at most this many nodes per text: a "billion
  // laughs" document is an error, not an out-of-memory.
  size_t max_alias_nodes = 100'000;
  // Deeper nesting is an error (and recursion in callers stays bounded).
  int max_depth = 200;
  // Keys of each document's `metadata` mapping (of each item's, for List
  // items) whose values are parsed but not kept: for callers that never read
  // them. Labels, annotations and managedFields are often most of a large
  // manifest, and a parsed key costs about six times its text. Syntax errors
  // and duplicate keys inside them are still reported.
  std::vector<std::string> drop_metadata_fields;
};

struct LoadResult {
  std::vector<Document> documents;  // those parsed before any error
  Status status;                    // InvalidArgument on a syntax error
  int error_line = 0;               // 1-based line of the error, 0 when ok
};

// Loads every document of `text`: JSON (one or more concatenated values) when
// the first non-blank character is '{' or '[', YAML (multi-document, `---`)
// otherwise; a text that starts like JSON but is not (bare words, single
// quotes, comments: YAML flow style) is read as YAML, and its errors are
// labelled YAML. Empty and null documents are skipped. YAML scalars resolve
// as kubectl's YAML reader does (YAML 1.1 booleans yes/no/on/off included);
// duplicate mapping keys are an error in both formats, as with the API
// server's strict field validation, naming the key and its line. Never
// throws.
LoadResult LoadDocuments(std::string_view text, const LoadOptions& options = {});

// The same, handing each document (each List item) to `sink` as soon as it
// is parsed instead of collecting them: a caller that keeps only a summary
// of each holds one document at a time (one List, for a List). The result's
// `documents` is empty.
LoadResult LoadDocuments(std::string_view text, const LoadOptions& options,
                         const std::function<void(Document&&)>& sink);

// Reads a whole file / stream. NotFound or Unavailable (with the path and
// strerror) when it cannot.
Result<std::string> ReadFileText(const std::string& path);
Result<std::string> ReadStreamText(std::istream& in);

}  // namespace switchboard::api
