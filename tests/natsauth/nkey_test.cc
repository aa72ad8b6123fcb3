#include "switchboard/natsauth/nkey.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "switchboard/common/base64.h"

namespace switchboard::natsauth {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Seed/public key pairs published by NATS: nats-server's auth callout tests
// and docs (account, user, curve), and the nkeys README (user).
struct Vector {
  const char* seed;
  const char* public_key;
  KeyType type;
};
constexpr Vector kVectors[] = {
    {"SAANDLKMXL6CUS3CP52WIXBEDN6YJ545GDKC65U5JZPPV6WH6ESWUA6YAI",
     "ABJHLOVMPA4CI6R5KLNGOB4GSLNIY7IOUPAJC4YFNDLQVIOBYQGUWVLA", KeyType::kAccount},
    {"SUAP277QP7U4JMFFPVZHLJYEQJ2UHOTYVEIZJYAWRJXQLP4FRSEHYZJJOU",
     "UBO2MQV67TQTVIRV3XFTEZOACM4WLOCMCDMAWN5QVN5PI2N6JHTVDRON", KeyType::kUser},
    {"SUAKYRHVIOREXV7EUZTBHUHL7NUMHPMAS7QMDU3GTIUWEI5LDNOXD43IZY",
     "UD466L6EBCM3YY5HEGHJANNTN4LSKTSUXTH7RILHCKEQMQHTBNLHJJXT", KeyType::kUser},
    {"SXAAXMRAEP6JWWHNB6IKFL554IE6LZVT6EY5MBRICPILTLOPHAG73I3YX4",
     "XAB3NANV3M6N7AHSQP2U5FRWKKUT7EG2ZXXABV4XVXYQRJGM4S2CZGHT", KeyType::kCurve},
};

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

RawKey RawFromHex(std::string_view hex) {
  std::string bytes = FromHex(hex);
  RawKey raw{};
  std::copy(bytes.begin(), bytes.end(), raw.begin());
  return raw;
}

// prefix bytes || payload || CRC16, base32: a well-formed frame of any shape.
std::string Frame(std::string bytes) {
  uint16_t crc = Crc16(bytes);
  bytes.push_back(static_cast<char>(crc & 0xff));
  bytes.push_back(static_cast<char>(crc >> 8));
  return Base32Encode(bytes);
}

TEST(Base32Test, MatchesRfc4648VectorsWithoutPadding) {
  struct Case {
    std::string plain, encoded;
  } cases[] = {{"", ""},
               {"f", "MY"},
               {"fo", "MZXQ"},
               {"foo", "MZXW6"},
               {"foob", "MZXW6YQ"},
               {"fooba", "MZXW6YTB"},
               {"foobar", "MZXW6YTBOI"},
               {std::string("\0\xff", 2), "AD7Q"}};
  for (const auto& c : cases) {
    EXPECT_EQ(Base32Encode(c.plain), c.encoded);
    auto d = Base32Decode(c.encoded);
    ASSERT_TRUE(d.ok()) << c.encoded << ": " << d.status().ToString();
    EXPECT_EQ(*d, c.plain);
  }
}

TEST(Base32Test, RefusesOtherAlphabetsPaddingAndImpossibleLengths) {
  for (const char* bad : {"mzxw6", "MZXW6===", "MY======", "MZX", "M", "MZXW6Y", "MZ1W6", "MZ8W6",
                          "MZ W6", "MZXW6\n"}) {
    auto d = Base32Decode(bad);
    EXPECT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(d.status().message(), HasSubstr("not base32")) << bad;
  }
}

TEST(Crc16Test, IsXmodem) {
  EXPECT_EQ(Crc16(""), 0);
  EXPECT_EQ(Crc16("123456789"), 0x31C3);  // the CRC-16/XMODEM check value
  EXPECT_EQ(Crc16("A"), 0x58E5);
}

TEST(NkeyTest, PublishedVectors) {
  for (const auto& v : kVectors) {
    SCOPED_TRACE(v.public_key);
    auto pair = KeyPair::FromSeed(v.seed);
    ASSERT_TRUE(pair.ok()) << pair.status().ToString();
    EXPECT_EQ(pair->type(), v.type);
    EXPECT_EQ(pair->public_key(), v.public_key);
    EXPECT_EQ(pair->Seed(), v.seed);

    auto seed = DecodeSeed(v.seed);
    ASSERT_TRUE(seed.ok());
    EXPECT_EQ(seed->type, v.type);
    EXPECT_EQ(EncodeSeed(seed->type, seed->bytes), v.seed);

    auto pub = DecodePublicKey(v.public_key, v.type);
    ASSERT_TRUE(pub.ok()) << pub.status().ToString();
    EXPECT_EQ(EncodePublicKey(pub->type, pub->raw), v.public_key);
    EXPECT_TRUE(IsPublicKey(v.public_key, v.type));
  }
}

TEST(NkeyTest, EveryKindRoundTripsWithItsLetter) {
  struct Case {
    KeyType type;
    char letter;
  } cases[] = {{KeyType::kAccount, 'A'},  {KeyType::kUser, 'U'},    {KeyType::kServer, 'N'},
               {KeyType::kOperator, 'O'}, {KeyType::kCluster, 'C'}, {KeyType::kCurve, 'X'}};
  RawKey raw{};
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<uint8_t>(i * 7 + 1);
  for (const auto& c : cases) {
    SCOPED_TRACE(KeyTypeName(c.type));
    std::string pub = EncodePublicKey(c.type, raw);
    ASSERT_EQ(pub.size(), 56u);
    EXPECT_EQ(pub[0], c.letter);
    auto back = DecodePublicKey(pub);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->type, c.type);
    EXPECT_EQ(back->raw, raw);

    std::string seed = EncodeSeed(c.type, raw);
    ASSERT_EQ(seed.size(), 58u);
    EXPECT_EQ(seed[0], 'S');
    EXPECT_EQ(seed[1], c.letter);
    auto s = DecodeSeed(seed);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->type, c.type);
    EXPECT_EQ(s->bytes, raw);
  }
}

TEST(NkeyTest, DecodeErrors) {
  const std::string account = kVectors[0].public_key;
  const std::string user = kVectors[1].public_key;
  const std::string seed = kVectors[0].seed;
  std::string raw32(32, '\x11');
  std::string flipped_middle = account;
  flipped_middle[20] = flipped_middle[20] == 'A' ? 'B' : 'A';
  std::string flipped_last = account;
  flipped_last.back() = flipped_last.back() == 'A' ? 'B' : 'A';
  std::string lower = account;
  lower[5] = static_cast<char>(std::tolower(lower[5]));

  struct Case {
    std::string name, text;
    std::string want;  // substring of the message
  } public_cases[] = {
      {"empty", "", "0 bytes, want 35"},
      {"non-base32 digit", account.substr(0, 10) + "1" + account.substr(11), "not base32"},
      {"lower case", lower, "not base32"},
      {"impossible length", account.substr(0, 54), "not base32"},
      {"truncated", account.substr(0, 48), "want 35 (56 characters)"},
      {"31 raw bytes, valid checksum", Frame(std::string(1, '\0') + raw32.substr(1)), "want 35"},
      {"a seed", seed, "58 characters decode to 36 bytes, want 35"},
      {"checksum: data changed", flipped_middle, "checksum mismatch"},
      {"checksum: checksum changed", flipped_last, "checksum mismatch"},
      {"seed prefix", Frame(std::string(1, static_cast<char>(KeyType::kSeed)) + raw32),
       "prefix 'S' (seed) is not a public key's"},
      {"private key prefix", Frame(std::string(1, static_cast<char>(15 << 3)) + raw32),
       "prefix 'P' is not a public key's"},
  };
  for (const auto& c : public_cases) {
    auto r = DecodePublicKey(c.text);
    EXPECT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(r.status().message(), HasSubstr(c.want)) << c.name;
  }

  auto wrong_kind = DecodePublicKey(user, KeyType::kAccount);
  ASSERT_FALSE(wrong_kind.ok());
  EXPECT_THAT(wrong_kind.status().message(),
              HasSubstr("prefix 'U' (user) where an account key (A) is expected"));
  EXPECT_FALSE(IsPublicKey(user, KeyType::kServer));
  EXPECT_FALSE(IsPublicKey(flipped_middle, KeyType::kAccount));

  std::string seed_flipped = seed;
  seed_flipped[20] = seed_flipped[20] == 'A' ? 'B' : 'A';
  std::string seed_lower = seed;
  seed_lower[2] = static_cast<char>(std::tolower(seed_lower[2]));  // a letter
  auto seed_frame = [&](uint8_t b0, uint8_t b1) {
    return Frame(std::string{static_cast<char>(b0), static_cast<char>(b1)} + raw32);
  };
  Case seed_cases[] = {
      {"a public key", account, "56 characters decode to 35 bytes, want 36"},
      {"truncated", seed.substr(0, 56), "want 36"},
      {"non-base32", seed_lower, "not base32"},
      {"checksum", seed_flipped, "checksum mismatch"},
      {"not a seed", seed_frame(0, 0), "prefix 'A' (account) where a seed (S) is expected"},
      {"seed of a seed", seed_frame(0x90 | (0x90 >> 5), (0x90 & 31) << 3), "names no kind of key"},
      {"seed of a private key", seed_frame(0x90 | (0x78 >> 5), (0x78 & 31) << 3),
       "names no kind of key"},
  };
  for (const auto& c : seed_cases) {
    auto r = DecodeSeed(c.text);
    EXPECT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(r.status().message(), HasSubstr(c.want)) << c.name;
    // Nothing of a seed is ever quoted back.
    EXPECT_THAT(r.status().message(), Not(HasSubstr(seed.substr(2, 12)))) << c.name;
    auto pair = KeyPair::FromSeed(c.text);
    EXPECT_FALSE(pair.ok()) << c.name;
    EXPECT_THAT(pair.status().message(), Not(HasSubstr(seed.substr(2, 12)))) << c.name;
  }
}

TEST(KeyPairTest, GeneratedKeysAreDistinctAndRoundTrip) {
  std::set<std::string> seen;
  for (KeyType type : {KeyType::kAccount, KeyType::kUser, KeyType::kServer, KeyType::kOperator,
                       KeyType::kCluster, KeyType::kCurve}) {
    for (int i = 0; i < 4; ++i) {
      auto pair = KeyPair::Generate(type);
      ASSERT_TRUE(pair.ok()) << pair.status().ToString();
      EXPECT_EQ(pair->type(), type);
      EXPECT_TRUE(IsPublicKey(pair->public_key(), type));
      EXPECT_TRUE(seen.insert(pair->public_key()).second);
      auto again = KeyPair::FromSeed(pair->Seed());
      ASSERT_TRUE(again.ok());
      EXPECT_EQ(again->public_key(), pair->public_key());
    }
  }
  auto seed_kind = KeyPair::Generate(KeyType::kSeed);
  EXPECT_FALSE(seed_kind.ok());
}

// RFC 8032 §7.1, test 1: an empty message.
TEST(SignTest, Rfc8032Vector) {
  auto pair = KeyPair::FromRawSeed(
      KeyType::kUser,
      RawFromHex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"));
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  auto pub = DecodePublicKey(pair->public_key());
  ASSERT_TRUE(pub.ok());
  EXPECT_EQ(pub->raw,
            RawFromHex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"));
  auto sig = pair->Sign("");
  ASSERT_TRUE(sig.ok());
  EXPECT_EQ(*sig, FromHex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821"
                          "590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"));
  EXPECT_TRUE(Verify(pair->public_key(), "", *sig).ok());
}

TEST(SignTest, SignVerifyAndTampering) {
  auto pair = KeyPair::FromSeed(kVectors[0].seed);
  ASSERT_TRUE(pair.ok());
  auto sig = pair->Sign("hello");
  ASSERT_TRUE(sig.ok());
  // The same signature from nkeys (ed25519 is deterministic).
  EXPECT_EQ(
      base64::EncodeUrl(*sig),
      "xfVZZwXKy6ddeX1ivXO5xPO2VeCGwzExmC6VOHoch0MKFBebyQAusFWqkapDEqtJL3xU8sRCxuXRSRNeN5xiDQ");
  std::string bad_sig = *sig;
  bad_sig[10] = static_cast<char>(bad_sig[10] ^ 1);
  auto other = KeyPair::FromSeed(kVectors[1].seed);
  ASSERT_TRUE(other.ok());

  struct Case {
    std::string name, key, message, signature;
    StatusCode want;
  } cases[] = {
      {"valid", pair->public_key(), "hello", *sig, StatusCode::kOk},
      {"tampered message", pair->public_key(), "hellp", *sig, StatusCode::kUnauthenticated},
      {"longer message", pair->public_key(), "hello!", *sig, StatusCode::kUnauthenticated},
      {"tampered signature", pair->public_key(), "hello", bad_sig, StatusCode::kUnauthenticated},
      {"another key", other->public_key(), "hello", *sig, StatusCode::kUnauthenticated},
      {"short signature", pair->public_key(), "hello", sig->substr(0, 63),
       StatusCode::kInvalidArgument},
      {"bad key", pair->public_key().substr(1), "hello", *sig, StatusCode::kInvalidArgument},
      {"curve key", kVectors[3].public_key, "hello", *sig, StatusCode::kInvalidArgument},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Verify(c.key, c.message, c.signature).code(), c.want) << c.name;
  }
}

// The authorizer signs from several threads with one key pair.
TEST(SignTest, OneKeyPairSignsFromManyThreads) {
  auto pair = KeyPair::FromSeed(kVectors[0].seed);
  ASSERT_TRUE(pair.ok());
  auto want = pair->Sign("hello");
  ASSERT_TRUE(want.ok());
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        auto sig = pair->Sign("hello");
        if (!sig.ok() || *sig != *want) ++mismatches;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(SignTest, CurveKeysCannotSign) {
  auto pair = KeyPair::FromSeed(kVectors[3].seed);
  ASSERT_TRUE(pair.ok());
  auto sig = pair->Sign("x");
  EXPECT_EQ(sig.status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace switchboard::natsauth
