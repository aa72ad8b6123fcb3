#include "switchboard/pubsub/compression.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>

namespace switchboard::pubsub {
namespace {

std::string Random(size_t n, uint64_t seed = 1) {
  std::mt19937_64 g(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(g());
  return s;
}

TEST(GzipTest, RoundTrip) {
  for (size_t n : {0u, 1u, 100u, 10240u, 1u << 20}) {
    std::string data = Random(n);
    auto back = GzipDecompress(GzipCompress(data), 2u << 20);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, data);
  }
}

TEST(GzipTest, OutputIsAGzipStream) {
  std::string gz = GzipCompress("hello");
  ASSERT_GE(gz.size(), 18u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
}

TEST(GzipTest, MultiMemberStreamsConcatenate) {
  auto back = GzipDecompress(GzipCompress("hello, ") + GzipCompress("world"), 1024);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, "hello, world");
}

TEST(GzipTest, BombIsRefusedAtTheCap) {
  // 16 MiB of zeros compress to ~16 KiB; the cap of 1 MiB stops it without
  // allocating more than the cap.
  std::string zeros(16u << 20, '\0');
  std::string bomb = GzipCompress(zeros, 9);
  zeros.clear();
  zeros.shrink_to_fit();
  auto r = GzipDecompress(bomb, 1u << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("1048576"), std::string::npos);
}

TEST(GzipTest, LyingTrailerIsHandled) {
  std::string gz = GzipCompress(Random(5000));
  // Claim 1 byte: the decoder must grow past it, still within the cap.
  gz[gz.size() - 4] = 1;
  gz[gz.size() - 3] = gz[gz.size() - 2] = gz[gz.size() - 1] = 0;
  auto r = GzipDecompress(gz, 1u << 20);
  EXPECT_FALSE(r.ok()) << "ISIZE mismatch is corrupt data";
}

TEST(GzipTest, GarbageIsInvalidArgument) {
  auto r = GzipDecompress("definitely not gzip", 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(GzipDecompress("", 1024).ok());
}

TEST(GzipTest, ZlibCanReadOurStreams) {
  std::string data = Random(10000, 7) + std::string(10000, 'a');
  std::string gz = GzipCompress(data);
  z_stream z{};
  ASSERT_EQ(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
  std::string out(data.size(), '\0');
  z.next_in = reinterpret_cast<Bytef*>(gz.data());
  z.avail_in = static_cast<uInt>(gz.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
  inflateEnd(&z);
  EXPECT_EQ(out, data);
}

TEST(CompressMessageTest, ThresholdIsTotalPayloadBytes) {
  Message m;
  m.payloads = std::vector<std::string>{std::string(3000, 'a'), std::string(2119, 'b')};  // 5119
  EXPECT_FALSE(CompressMessage(m, 5120).compressed);
  m.payloads->push_back("c");  // 5120
  Message c = CompressMessage(m, 5120);
  EXPECT_TRUE(c.compressed);
  EXPECT_FALSE(m.compressed) << "the input is not modified";
  ASSERT_EQ(c.payloads->size(), 3u);
  ASSERT_TRUE(DecompressMessage(&c, 1u << 20).ok());
  EXPECT_FALSE(c.compressed);
  EXPECT_EQ(c.payloads, m.payloads);
}

TEST(CompressMessageTest, DecompressCapIsPerMessageTotal) {
  Message m;
  m.payloads = std::vector<std::string>{std::string(6000, 'a'), std::string(6000, 'b')};
  Message c = CompressMessage(m, 1);
  Status s = DecompressMessage(&c, 10000);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("messages[1]"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace switchboard::pubsub
