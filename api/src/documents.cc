#include "switchboard/api/documents.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

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

LoadResult LoadDocuments(std::string_view text, const LoadOptions& options) {
  size_t first = text.find_first_not_of(" \t\r\n");
  // A UTF-8 byte order mark is allowed before either format.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") {
    text.remove_prefix(3);
    first = text.find_first_not_of(" \t\r\n");
  }
  bool json = first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
  internal::RawResult raw =
      json ? internal::LoadJson(text, options) : internal::LoadYaml(text, options);

  LoadResult out;
  out.status = raw.status;
  out.error_line = raw.error_line;
  int index = 0;
  for (auto& doc : raw.documents) {
    if (options.expand_lists && IsListKind(doc.value)) {
      auto& items = doc.value["items"];
      for (size_t i = 0; i < items.size(); ++i) {
        if (items[i].is_null()) continue;
        int line = i < doc.item_lines.size() ? doc.item_lines[i] : doc.line;
        out.documents.push_back({std::move(items[i]), line, index, static_cast<int>(i)});
      }
    } else {
      out.documents.push_back({std::move(doc.value), doc.line, index, -1});
    }
    ++index;
  }
  return out;
}

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
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::Unavailable("read failed");
  return std::move(ss).str();
}

}  // namespace switchboard::api
