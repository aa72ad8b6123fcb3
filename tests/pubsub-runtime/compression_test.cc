#include "switchboard/pubsub/compression.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <map>
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
  EXPECT_FALSE(TryCompressMessage(m, 5120).has_value());
  (*m.payloads)[1].push_back('b');  // 5120
  Message c = CompressMessage(m, 5120);
  EXPECT_TRUE(c.compressed);
  EXPECT_FALSE(m.compressed) << "the input is not modified";
  ASSERT_EQ(c.payloads->size(), 2u);
  ASSERT_TRUE(DecompressMessage(&c, 1u << 20).ok());
  EXPECT_FALSE(c.compressed);
  EXPECT_EQ(c.payloads, m.payloads);
}

TEST(CompressMessageTest, KeepsEveryOtherField) {
  Message m;
  m.id = "task-completed";
  m.payloads =
      std::vector<std::string>{std::string(6000, 'a'), "{\"k\":\"" + std::string(200, 'v') + "\"}"};
  m.tenant_id = "8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
  m.immediately_expire = true;
  m.persistent = true;
  m.otel_carrier = std::map<std::string, std::string>{{"traceparent", "00-aa-bb-01"}};
  m.retries = 3;
  m.published_at = Timestamp{1700000000, 123456789, 3600};
  auto c = TryCompressMessage(m, 0);
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->compressed);
  ASSERT_TRUE(DecompressMessage(&*c, 1u << 20).ok());
  EXPECT_EQ(*c, m);
}

TEST(CompressMessageTest, AlreadyCompressedOrNullPayloadsAreLeftAlone) {
  Message m;
  m.payloads = std::vector<std::string>{GzipCompress(std::string(9000, 'x'))};
  m.compressed = true;
  EXPECT_FALSE(TryCompressMessage(m, 0).has_value());
  Message empty;
  EXPECT_FALSE(TryCompressMessage(empty, 0).has_value());
  EXPECT_EQ(CompressMessage(empty, 0), empty);
}

// The publish-side rule: a payload is never sent compressed unless gzip made
// it smaller, and the one `compressed` flag covers the whole message.
TEST(CompressMessageTest, IncompressiblePayloadIsSentAsItWas) {
  Message m;
  m.id = "random";
  m.payloads = std::vector<std::string>{Random(1u << 20, 9)};
  EXPECT_GT(GzipCompress((*m.payloads)[0]).size(), (*m.payloads)[0].size())
      << "premise: gzip makes random bytes larger";
  EXPECT_FALSE(TryCompressMessage(m, 0).has_value());
  Message c = CompressMessage(m, 0);
  EXPECT_FALSE(c.compressed);
  EXPECT_EQ(c, m);
}

TEST(CompressMessageTest, OnePayloadThatDoesNotShrinkKeepsTheMessageUncompressed) {
  Message m;
  m.payloads = std::vector<std::string>{std::string(8000, 'a'), Random(4000, 2)};
  EXPECT_FALSE(TryCompressMessage(m, 0).has_value());
  m.payloads = std::vector<std::string>{std::string(8000, 'a'), "{}"};  // too short to shrink
  EXPECT_FALSE(TryCompressMessage(m, 0).has_value());
  m.payloads = std::vector<std::string>{std::string(8000, 'a'), std::string(100, 'b')};
  EXPECT_TRUE(TryCompressMessage(m, 0).has_value());
}

TEST(GzipIfSmallerTest, NeverReturnsAStreamThatIsNotSmaller) {
  // Around the break-even point: repetitive prefixes of growing length,
  // followed by random bytes, so some inputs shrink by a byte or two and
  // others grow by a byte or two.
  std::string noise = Random(4096, 5);
  int shrunk = 0, declined = 0;
  for (size_t repeat : {0u, 8u, 16u, 24u, 32u, 64u}) {
    for (size_t n = 0; n < 600; n += 7) {
      std::string data = std::string(repeat, 'r') + noise.substr(0, n);
      auto gz = GzipCompressIfSmaller(data);
      if (!gz) {
        ++declined;
        EXPECT_GE(GzipCompress(data).size(), data.size()) << "declined a shrinkable input";
        continue;
      }
      ++shrunk;
      ASSERT_LT(gz->size(), data.size()) << "repeat " << repeat << " n " << n;
      auto back = GzipDecompress(*gz, 1u << 20);
      ASSERT_TRUE(back.ok());
      EXPECT_EQ(*back, data);
    }
  }
  EXPECT_GT(shrunk, 0);
  EXPECT_GT(declined, 0);
}

TEST(GzipIfSmallerTest, LargePayloadsAreJudgedByTheirHeadFirst) {
  // Incompressible head: declined from the sample, sent as it was.
  std::string head_random = Random(kSample, 6) + std::string(kSampledFrom, 'a');
  EXPECT_FALSE(GzipCompressIfSmaller(head_random).has_value());
  // Compressible head, incompressible rest: the whole payload decides (8 KiB
  // of 'a' more than pay for the stored random blocks' few bytes).
  std::string tail_random = std::string(kSample, 'a') + Random(kSampledFrom, 7);
  auto tail = GzipCompressIfSmaller(tail_random);
  ASSERT_TRUE(tail.has_value());
  EXPECT_LT(tail->size(), tail_random.size());
  EXPECT_FALSE(
      GzipCompressIfSmaller(Random(kSampledFrom, 7) + std::string(kSample, 'a')).has_value());
  std::string mostly_text = Random(kSample / 2, 8) + std::string(kSampledFrom, 'b');
  auto gz = GzipCompressIfSmaller(mostly_text);
  ASSERT_TRUE(gz.has_value()) << "a head that shrinks at all lets the whole payload be tried";
  auto back = GzipDecompress(*gz, 1u << 20);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, mostly_text);
  // Just below the sampling size, the whole payload is always tried.
  std::string small = Random(kSample, 6) + std::string(kSampledFrom - kSample - 1, 'a');
  EXPECT_TRUE(GzipCompressIfSmaller(small).has_value());
}

TEST(GzipIfSmallerTest, TinyAndEmptyInputsAreDeclined) {
  EXPECT_FALSE(GzipCompressIfSmaller("").has_value());
  EXPECT_FALSE(GzipCompressIfSmaller("hello").has_value());
  EXPECT_FALSE(GzipCompressIfSmaller(std::string(18, 'a')).has_value());
  EXPECT_TRUE(GzipCompressIfSmaller(std::string(64, 'a')).has_value());
}

TEST(GzipIfSmallerTest, LargePayloadsOutsideTheReusedBufferRoundTrip) {
  std::string data = std::string(3u << 20, 'q') + Random(1000, 3);
  auto gz = GzipCompressIfSmaller(data);
  ASSERT_TRUE(gz.has_value());
  EXPECT_LT(gz->size(), data.size() / 100);
  EXPECT_EQ(gz->capacity() < data.size() / 2, true) << "the output buffer is trimmed";
  auto back = GzipDecompress(*gz, 4u << 20);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, data);
  EXPECT_FALSE(GzipCompressIfSmaller(Random(2u << 20, 4)).has_value());
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
