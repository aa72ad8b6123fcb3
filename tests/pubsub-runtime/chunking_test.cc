#include "switchboard/pubsub/chunking.h"

#include <gtest/gtest.h>

#include "switchboard/pubsub/codec.h"

namespace switchboard::pubsub {
namespace {

Message WithPayloads(size_t n, size_t size) {
  Message m;
  m.id = "chunky";
  m.tenant_id = "8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
  m.retries = 2;
  m.persistent = true;
  m.otel_carrier = std::map<std::string, std::string>{{"traceparent", "00-x-y-01"}};
  m.payloads.emplace();
  for (size_t i = 0; i < n; ++i) {
    std::string p = "#" + std::to_string(i) + ":";
    p.resize(size, static_cast<char>('a' + i % 26));
    m.payloads->push_back(p);
  }
  return m;
}

// Every payload exactly once, in order, in bodies under the limit, each
// carrying the original metadata.
void ExpectExactlyOnceInOrder(const Message& m, const std::vector<std::string>& bodies,
                              int64_t limit) {
  std::vector<std::string> seen;
  for (const auto& b : bodies) {
    EXPECT_LE(static_cast<int64_t>(b.size()), limit);
    auto d = DecodeMessage(b);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(d->id, m.id);
    EXPECT_EQ(d->tenant_id, m.tenant_id);
    EXPECT_EQ(d->retries, m.retries);
    EXPECT_EQ(d->persistent, m.persistent);
    EXPECT_EQ(d->otel_carrier, m.otel_carrier);
    for (const auto& p : *d->payloads) seen.push_back(p);
  }
  EXPECT_EQ(seen, *m.payloads);
}

TEST(ChunkingTest, FitsInOneBody) {
  Message m = WithPayloads(3, 100);
  auto r = EncodeChunks(m, 16 * 1024 * 1024);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0], EncodeMessage(m));
}

TEST(ChunkingTest, SplitsInHalvesRecursively) {
  // 8 payloads of ~1 KiB (base64 ~1.4 KiB each) under a 3 KiB limit: two
  // per body, produced by halving 8 -> 4 -> 2.
  Message m = WithPayloads(8, 1024);
  auto r = EncodeChunks(m, 3 * 1024 + 512);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->size(), 4u);
  ExpectExactlyOnceInOrder(m, *r, 3 * 1024 + 512);
}

TEST(ChunkingTest, OddCountsUseChunkSizeHalfRoundedDown) {
  // n = 5, chunk size 2: [0,1] [2,3] [4] when two payloads fit but 5 do not.
  Message m = WithPayloads(5, 1000);
  int64_t limit = static_cast<int64_t>(EncodedSize(WithPayloads(2, 1000))) + 10;
  auto r = EncodeChunks(m, limit);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ(DecodeMessage((*r)[2])->payloads->size(), 1u);
  ExpectExactlyOnceInOrder(m, *r, limit);
}

TEST(ChunkingTest, ManySizesAlwaysExactlyOnce) {
  for (size_t n : {2u, 3u, 7u, 16u, 33u}) {
    for (int64_t limit : {1500, 4000, 20000}) {
      Message m = WithPayloads(n, 700);
      auto r = EncodeChunks(m, limit);
      ASSERT_TRUE(r.ok()) << n << " " << limit;
      ExpectExactlyOnceInOrder(m, *r, limit);
    }
  }
}

TEST(ChunkingTest, SingleOversizedPayloadIsAnError) {
  Message m = WithPayloads(1, 5000);
  auto r = EncodeChunks(m, 4000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("4000"), std::string::npos);
  // ...also when it is one of many: the others are not enough to hide it.
  Message many = WithPayloads(4, 100);
  many.payloads->push_back(std::string(5000, 'z'));
  EXPECT_FALSE(EncodeChunks(many, 4000).ok());
}

}  // namespace
}  // namespace switchboard::pubsub
