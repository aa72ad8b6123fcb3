#include "switchboard/api/documents.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "loaders.h"

namespace switchboard::api {
namespace {

bool IsListKind(const nlohmann::json& v) {
  if (!v.is_object()) return false;
  auto kind = v.find("kind");
  auto items = v.find("items");
  if (kind == v.end() || !kind->is_string() || items == v.end() || !items->is_array()) {
    return false;
  }
  const auto& k = kind->get_ref<const std::string&>();
  return k.size() >= 4 && k.compare(k.size() - 4, 4, "List") == 0;
}

}  // namespace

LoadResult LoadDocuments(std::string_view text, const LoadOptions& options,
                         const std::function<void(Document&&)>& sink) {
  size_t first = text.find_first_not_of(" \t\r\n");
  // A UTF-8 byte order mark is allowed before either format.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") {
    text.remove_prefix(3);
    first = text.find_first_not_of(" \t\r\n");
  }
  int index = 0;
  internal::Emit emit = [&](internal::RawDocument&& doc) {
    if (options.expand_lists && IsListKind(doc.value)) {
      auto& items = doc.value["items"];
      for (size_t i = 0; i < items.size(); ++i) {
        if (items[i].is_null()) continue;
        int line = i < doc.item_lines.size() ? doc.item_lines[i] : doc.line;
        sink({std::move(items[i]), line, index, static_cast<int>(i)});
      }
    } else {
      sink({std::move(doc.value), doc.line, index, -1});
    }
    ++index;
  };
  bool json = first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
  internal::RawResult raw =
      json ? internal::LoadJson(text, options, emit) : internal::LoadYaml(text, options, emit);
  // YAML flow style starts with '{' or '[' too; its errors are YAML errors.
  if (raw.not_json) raw = internal::LoadYaml(text, options, emit);

  LoadResult out;
  out.status = raw.status;
  out.error_line = raw.error_line;
  return out;
}

LoadResult LoadDocuments(std::string_view text, const LoadOptions& options) {
  std::vector<Document> documents;
  LoadResult out =
      LoadDocuments(text, options, [&](Document&& d) { documents.push_back(std::move(d)); });
  out.documents = std::move(documents);
  return out;
}

// Reads straight into the string that is returned: a string stream would
// hold the text two or three times while growing and copying out, which on
// a large manifest costs more memory than the parsed documents.
Result<std::string> ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string msg = path + ": " + std::strerror(err);
    if (err == ENOENT) return Status::NotFound(msg);
    return Status::Unavailable(msg);
  }
  auto r = ReadStreamText(in);
  if (!r.ok()) return Status::Unavailable(path + ": " + r.status().message());
  return r;
}

Result<std::string> ReadStreamText(std::istream& in) {
  std::string text;
  // A regular file says how large it is; a pipe does not (seek fails).
  std::streampos start = in.tellg();
  if (start != std::streampos(-1) && in.seekg(0, std::ios::end)) {
    std::streampos end = in.tellg();
    in.seekg(start);
    if (end != std::streampos(-1) && end > start) text.reserve(static_cast<size_t>(end - start));
  }
  in.clear();
  char buf[64 << 10];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Status::Unavailable("read failed");
  return text;
}

}  // namespace switchboard::api
