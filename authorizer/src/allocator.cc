// jemalloc's settings for switchboard-authorizer (linked into the binary
// only; the library and its tests use the system allocator). The caches
// hold tens of thousands of small entries and a relist or a rebuild frees
// as many again: jemalloc's size classes pack them closer than glibc's
// bins, and freed pages go back to the system instead of staying pinned
// by an entry among them (BENCHMARKS.md "Authorizer memory at 10,000").
//   background_thread  a thread of jemalloc's returns freed pages
//   dirty_decay_ms     freed pages are returned within about a second
//   muzzy_decay_ms:0   at once (MADV_DONTNEED), so VmRSS shows it
//   narenas:1          one arena: the watcher and request threads would
//                      otherwise each fill and fragment their own
// Authorizer::Impl also purges every arena after a rebuild (mallctl).
extern "C" {
// NOLINTNEXTLINE: the name jemalloc reads at start.
const char* malloc_conf = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,narenas:1";
}
