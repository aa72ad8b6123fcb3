// The size ceiling of the rendered file (the config Secret holds at most
// 1 MiB): with realistic names, the newest installations are left out, what
// is in the file stays, rotations of rendered installations use the
// reserve, and a deletion lets the oldest waiting one in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <set>

#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/render.h"

namespace switchboard::operator_logic {
namespace {

// A bcrypt string of the length cost 6 gives (60 characters).
std::string Hash(int i) {
  static constexpr char kAlphabet[] =
      "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string h = "$2b$06$";
  unsigned v = static_cast<unsigned>(i + 1) * 2654435761u;
  for (int k = 0; k < 53; ++k) h.push_back(kAlphabet[(v >> (k % 23)) % 64]);
  return h;
}

// Creation times in Unix seconds: tenant i was created i seconds after
// the first (api::CreationTimeOf).
constexpr int64_t kFirstCreated = 1793000000;
int64_t Created(int i) { return kFirstCreated + i; }

// Namespaces as tenants name them: "tenant-<8 hex>-production", backend
// "hatchet-engine", the default user "<namespace>-<name>" and a prefix per
// tenant. About 320 bytes of file per installation.
Installation Tenant(int i) {
  char ns[48];
  std::snprintf(ns, sizeof ns, "tenant-%08x-production", static_cast<unsigned>(i) * 2654435761u);
  Installation inst;
  inst.ns = ns;
  inst.name = "hatchet-engine";
  inst.subject_prefix = std::string("hatchet.") + ns;
  inst.users = {{inst.ns + "-" + inst.name, Hash(i)}};
  inst.created = Created(i);
  return inst;
}

RenderInput Tenants(int n) {
  RenderInput in;
  in.server_ns = "nats";
  in.server_name = "shared";
  for (int i = 0; i < n; ++i) in.installations.push_back(Tenant(i));
  // Any input order: the ceiling decides by creation time.
  std::mt19937 rng(7);
  std::shuffle(in.installations.begin(), in.installations.end(), rng);
  return in;
}

std::set<std::string> RenderedKeys(const RenderedConfig& r) {
  std::set<std::string> keys;
  size_t pos = 0;
  while ((pos = r.text.find("    # ", pos)) != std::string::npos) {
    pos += 6;
    keys.insert(r.text.substr(pos, r.text.find('\n', pos) - pos));
  }
  return keys;
}

std::string Key(const Installation& i) { return i.ns + "/" + i.name; }

constexpr size_t kCap = kMaxSecretDataBytes - kRotationReserveBytes;
constexpr int kTenants = 4000;  // about 1.2 MiB without a ceiling

TEST(RenderCeiling, AtTheRealLimitTheNewestAreLeftOut) {
  RenderInput unbounded = Tenants(kTenants);
  unbounded.max_bytes = std::nullopt;
  auto all = RenderNatsConfig(unbounded);
  ASSERT_TRUE(all.ok());
  ASSERT_GT(all->text.size(), kMaxSecretDataBytes) << "the test must cross the limit";
  EXPECT_EQ(all->installations, kTenants);

  auto r = RenderNatsConfig(Tenants(kTenants));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_LE(r->text.size(), kCap) << "new installations stop below the reserve";
  ASSERT_GT(r->left_out_full, 0);
  EXPECT_EQ(r->installations + r->left_out_full, kTenants);
  EXPECT_EQ(r->left_out, r->left_out_full);
  EXPECT_EQ(r->users_left_out_full, 0);
  // Exactly the oldest fit, and one more would not have.
  const int fit = r->installations;
  std::set<std::string> oldest;
  RenderInput next;
  next.server_ns = "nats";
  next.server_name = "shared";
  next.max_bytes = std::nullopt;
  for (int i = 0; i <= fit; ++i) {
    if (i < fit) oldest.insert(Key(Tenant(i)));
    next.installations.push_back(Tenant(i));
  }
  EXPECT_EQ(RenderedKeys(*r), oldest);
  EXPECT_GT(RenderNatsConfig(next)->text.size(), kCap);
  // Each one left out says so, naming the server and the limit.
  ASSERT_EQ(r->rejected.size(), static_cast<size_t>(r->left_out_full));
  for (const auto& rej : r->rejected) {
    EXPECT_EQ(rej.reason, reasons::kConfigFull);
    EXPECT_EQ(rej.user, "");
    EXPECT_EQ(rej.field, "spec.nats.serverRef");
    EXPECT_NE(rej.message.find("NatsServer nats/shared"), std::string::npos) << rej.message;
    EXPECT_NE(rej.message.find("1048576 bytes"), std::string::npos) << rej.message;
    EXPECT_EQ(oldest.count(rej.ns + "/" + rej.name), 0u);
  }
  EXPECT_TRUE(std::is_sorted(r->rejected.begin(), r->rejected.end(),
                             [](const Rejected& a, const Rejected& b) {
                               return a.ns + "/" + a.name < b.ns + "/" + b.name;
                             }));
  // Every replica decides the same, whatever the input order.
  RenderInput shuffled = Tenants(kTenants);
  std::reverse(shuffled.installations.begin(), shuffled.installations.end());
  EXPECT_EQ(RenderNatsConfig(shuffled)->hash, r->hash);
  // The header counts what is rendered.
  EXPECT_NE(r->text.find("installations: " + std::to_string(fit) + "\n"), std::string::npos);
}

TEST(RenderCeiling, WhatIsInTheFileStaysEvenForAnOlderNewcomer) {
  RenderInput in = Tenants(kTenants);
  auto first = RenderNatsConfig(in);
  ASSERT_TRUE(first.ok());
  in.in_file = UsersInConfig(first->text);
  // Created before every other one, but not in the file: it waits.
  Installation old = Tenant(kTenants + 1);
  old.created = kFirstCreated - 86400;
  in.installations.push_back(old);
  auto again = RenderNatsConfig(in);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->text, first->text) << "nothing rendered is disturbed";
  bool listed = false;
  for (const auto& rej : again->rejected) listed = listed || rej.ns == old.ns;
  EXPECT_TRUE(listed);
}

TEST(RenderCeiling, RotationsOfRenderedInstallationsUseTheReserve) {
  RenderInput in = Tenants(kTenants);
  auto first = RenderNatsConfig(in);
  ASSERT_TRUE(first.ok());
  in.in_file = UsersInConfig(first->text);
  const std::set<std::string> rendered = RenderedKeys(*first);
  // 100 rendered installations stage a rotation: a new user beside the old.
  int staged = 0;
  for (auto& inst : in.installations) {
    if (staged == 100 || !rendered.count(Key(inst))) continue;
    inst.users.insert(inst.users.begin(), {inst.users[0].username + "-r1", Hash(-1 - staged)});
    ++staged;
  }
  auto r = RenderNatsConfig(in);
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->text.size(), kCap) << "the rotations took some of the reserve";
  EXPECT_LE(r->text.size(), kMaxSecretDataBytes);
  EXPECT_EQ(r->users_left_out_full, 0);
  EXPECT_EQ(RenderedKeys(*r), rendered);
  EXPECT_EQ(r->left_out_full, first->left_out_full);
  for (const auto& inst : in.installations) {
    if (inst.users.size() == 2) {
      EXPECT_NE(r->text.find("\"" + inst.users[0].username + "\""), std::string::npos);
    }
  }
}

TEST(RenderCeiling, WhenEvenTheReserveIsFullTheNewestRotationsWaitAndNothingRenderedGoes) {
  RenderInput in = Tenants(kTenants);
  auto first = RenderNatsConfig(in);
  ASSERT_TRUE(first.ok());
  in.in_file = UsersInConfig(first->text);
  const std::set<std::string> rendered = RenderedKeys(*first);
  for (auto& inst : in.installations) {
    if (!rendered.count(Key(inst))) continue;
    inst.users.insert(inst.users.begin(), {inst.users[0].username + "-r1", Hash(-7)});
  }
  auto r = RenderNatsConfig(in);
  ASSERT_TRUE(r.ok());
  EXPECT_LE(r->text.size(), kMaxSecretDataBytes);
  ASSERT_GT(r->users_left_out_full, 0);
  EXPECT_EQ(RenderedKeys(*r), rendered);
  for (const auto& u : in.in_file) {
    EXPECT_NE(r->text.find("{user: \"" + u.username + "\""), std::string::npos) << u.username;
  }
  int users = 0;
  for (const auto& rej : r->rejected) {
    if (rej.user.empty()) continue;
    ++users;
    EXPECT_EQ(rej.reason, reasons::kConfigFull);
    EXPECT_EQ(rej.user.substr(rej.user.size() - 3), "-r1");
    EXPECT_EQ(r->text.find("\"" + rej.user + "\""), std::string::npos);
  }
  EXPECT_EQ(users, r->users_left_out_full);
}

TEST(RenderCeiling, ADeletionLetsTheOldestWaitingOneIn) {
  RenderInput in = Tenants(kTenants);
  auto first = RenderNatsConfig(in);
  ASSERT_TRUE(first.ok());
  const int fit = first->installations;
  in.in_file = UsersInConfig(first->text);
  // Tenant 0 (rendered) is deleted: tenant `fit`, the oldest left out, and
  // no other, takes its place (same sizes).
  std::erase_if(in.installations, [](const Installation& i) { return Key(i) == Key(Tenant(0)); });
  auto r = RenderNatsConfig(in);
  ASSERT_TRUE(r.ok());
  EXPECT_LE(r->text.size(), kCap);
  auto keys = RenderedKeys(*r);
  EXPECT_EQ(keys.count(Key(Tenant(0))), 0u);
  EXPECT_EQ(keys.count(Key(Tenant(fit))), 1u);
  EXPECT_EQ(keys.count(Key(Tenant(fit + 1))), 0u);
  EXPECT_EQ(r->installations, fit);
}

TEST(RenderCeiling, AccountsModeStaysWithinTheLimitToo) {
  RenderInput in = Tenants(kTenants);
  in.isolation = Isolation::kAccounts;
  auto r = RenderNatsConfig(in);
  ASSERT_TRUE(r.ok());
  EXPECT_LE(r->text.size(), kCap);
  EXPECT_GT(r->left_out_full, 0);
  EXPECT_EQ(r->installations + r->left_out_full, kTenants);
}

// The limits line is part of an account's bytes: with limits on every
// installation the file still stays within the ceiling, holds fewer of
// them, and is full (one more installation would not have fitted).
TEST(RenderCeiling, AccountLimitsCountTowardsTheCeiling) {
  RenderInput in = Tenants(kTenants);
  in.isolation = Isolation::kAccounts;
  auto plain = RenderNatsConfig(in);
  for (auto& inst : in.installations) inst.limits = {1000000, 1000000, 67108864};
  auto r = RenderNatsConfig(in);
  ASSERT_TRUE(r.ok() && plain.ok());
  EXPECT_LE(r->text.size(), kCap);
  EXPECT_LT(r->installations, plain->installations);
  EXPECT_EQ(r->installations + r->left_out_full, kTenants);
  const size_t per_installation = r->text.size() / static_cast<size_t>(r->installations);
  EXPECT_GT(r->text.size() + per_installation, kCap) << "the file is full, not cut short";
}

TEST(RenderCeiling, BelowTheLimitNothingIsLeftOut) {
  auto r = RenderNatsConfig(Tenants(100));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->installations, 100);
  EXPECT_EQ(r->left_out_full, 0);
  EXPECT_TRUE(r->rejected.empty());
}

}  // namespace
}  // namespace switchboard::operator_logic
