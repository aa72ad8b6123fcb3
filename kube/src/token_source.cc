#include "token_source.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "file_util.h"

namespace switchboard::kube::internal {

TokenSource::TokenSource(std::string static_token, std::string token_file)
    : static_token_(std::move(static_token)), file_(std::move(token_file)) {}

Result<std::string> TokenSource::Token() {
  if (file_.empty()) return static_token_;
  struct stat st {};
  if (::stat(file_.c_str(), &st) != 0) {
    std::lock_guard<std::mutex> lock(mu_);
    // Keep using the last token while the file is briefly missing (it is
    // replaced by a symlink swap during rotation).
    if (!cached_.empty()) return cached_;
    return Status::Unauthenticated("token file " + file_ + ": " + std::strerror(errno));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (st.st_size == size_ && st.st_mtim.tv_sec == mtime_.tv_sec &&
      st.st_mtim.tv_nsec == mtime_.tv_nsec && !cached_.empty()) {
    return cached_;
  }
  auto content = ReadWholeFile(file_, "token file");
  if (!content.ok()) {
    if (!cached_.empty()) return cached_;
    return content.status();
  }
  std::string t = std::move(content.value());
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  cached_ = std::move(t);
  mtime_ = st.st_mtim;
  size_ = st.st_size;
  return cached_;
}

}  // namespace switchboard::kube::internal
