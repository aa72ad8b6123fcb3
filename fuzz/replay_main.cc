// Replays fuzz inputs through a target's LLVMFuzzerTestOneInput without
// libFuzzer, so every input the fuzzers ever found (fuzz/corpus/<target>/)
// runs as an ordinary test in every build, including the sanitized one
// where UBSan and ASan turn a regression into a failure.
//
//   <target>_replay PATH...   files, or folders read recursively
//
// Exits 0 after replaying at least one input; 2 when no input was found (a
// moved corpus folder must not turn the test into a silent pass). A crash,
// abort or sanitizer report ends the process with its own failure status.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> Inputs(int argc, char** argv) {
  std::vector<fs::path> out;
  for (int i = 1; i < argc; ++i) {
    fs::path p(argv[i]);
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto& e : fs::recursive_directory_iterator(p, ec)) {
        if (e.is_regular_file()) out.push_back(e.path());
      }
    } else if (fs::is_regular_file(p, ec)) {
      out.push_back(p);
    } else {
      std::fprintf(stderr, "replay: %s: no such file or folder\n", argv[i]);
    }
  }
  std::sort(out.begin(), out.end());  // same order on every machine
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> inputs = Inputs(argc, argv);
  if (inputs.empty()) {
    std::fprintf(stderr, "replay: no inputs found in the paths given\n");
    return 2;
  }
  for (const fs::path& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
      return 2;
    }
    // Announce before running, so a crash names its input.
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs\n", inputs.size());
  return 0;
}
