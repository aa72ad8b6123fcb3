// Two backends on one server that claim the same subject prefix or user
// name (api/claims.h): the older keeps it, equal ages go to the smaller
// namespace/name, only the other is refused and its message names the
// one that keeps it. Each row is judged both ways, through Validate with
// the other as context, through ValidateAll and through a ContextIndex.
#include <gtest/gtest.h>

#include <optional>

#include "switchboard/api/claims.h"
#include "switchboard/rules/validate.h"
#include "test_objects.h"

namespace switchboard::rules {
namespace {

using nlohmann::json;
using testing::Backend;
using testing::Server;

json Claimant(const std::string& ns, const std::string& name, const std::string& prefix,
              const std::string& user, const std::optional<std::string>& created) {
  json b = Backend(ns, name, prefix);
  if (!user.empty()) b["spec"]["nats"]["credentials"] = {{"username", user}};
  if (created) b["metadata"]["creationTimestamp"] = *created;
  return b;
}

const Finding* Find(const Report& r, const std::string& rule) {
  for (const auto& f : r.errors) {
    if (f.rule == rule) return &f;
  }
  return nullptr;
}

std::string Dump(const Report& r) {
  std::string s;
  for (const auto& f : r.errors) s += "  " + f.ToString() + " [" + f.rule + "]\n";
  return s;
}

struct Side {
  std::string ns, name, prefix, user;
  std::optional<std::string> created;
};

struct Case {
  const char* name;
  Side a, b;
  const char* rule;     // unique-prefix or unique-username
  bool a_keeps;         // else b keeps it
  const char* because;  // in the loser's message
};

const std::optional<std::string> kNotStored = std::nullopt;

TEST(Conflicts, TheOlderKeepsTheClaim) {
  const Case cases[] = {
      {"older keeps the prefix",
       {"team-z", "old", "shared", "", "2026-01-01T10:00:00Z"},
       {"team-a", "new", "shared", "", "2026-01-01T10:00:01Z"},
       "unique-prefix",
       true,
       "created earlier"},
      {"older keeps the prefix, given second",
       {"team-a", "new", "shared", "", "2026-03-01T00:00:00Z"},
       {"team-z", "old", "shared", "", "2025-12-31T23:59:59Z"},
       "unique-prefix",
       false,
       "created earlier"},
      {"same second: the smaller namespace/name keeps it",
       {"team-b", "x", "shared", "", "2026-01-01T10:00:00Z"},
       {"team-a", "x", "shared", "", "2026-01-01T10:00:00Z"},
       "unique-prefix",
       false,
       "same second"},
      {"same second, same namespace: the smaller name keeps it",
       {"team-a", "alpha", "shared", "", "2026-01-01T10:00:00Z"},
       {"team-a", "beta", "shared", "", "2026-01-01T10:00:00Z"},
       "unique-prefix",
       true,
       "same second"},
      {"a fraction of a second does not count",
       {"team-b", "x", "shared", "", "2026-01-01T10:00:00.1Z"},
       {"team-a", "x", "shared", "", "2026-01-01T10:00:00.9Z"},
       "unique-prefix",
       false,
       "same second"},
      {"offsets compare as instants",
       {"team-a", "x", "shared", "", "2026-01-01T10:00:00Z"},
       {"team-b", "x", "shared", "", "2026-01-01T11:00:00+02:00"},
       "unique-prefix",
       false,
       "created earlier"},
      {"not stored yet (CREATE, a manifest) loses to a stored one",
       {"team-a", "a", "shared", "", kNotStored},
       {"team-z", "z", "shared", "", "2026-01-01T10:00:00Z"},
       "unique-prefix",
       false,
       "already holds it"},
      {"an unreadable creationTimestamp counts as not stored",
       {"team-a", "a", "shared", "", "yesterday"},
       {"team-z", "z", "shared", "", "2026-01-01T10:00:00Z"},
       "unique-prefix",
       false,
       "already holds it"},
      {"neither stored: the smaller namespace/name keeps it",
       {"team-b", "x", "shared", "", kNotStored},
       {"team-a", "x", "shared", "", kNotStored},
       "unique-prefix",
       false,
       "neither is created yet"},
      {"older keeps the user name",
       {"team-z", "old", "p.z", "hatchet", "2026-01-01T10:00:00Z"},
       {"team-a", "new", "p.a", "hatchet", "2026-01-02T10:00:00Z"},
       "unique-username",
       true,
       "created earlier"},
      {"same second user name",
       {"team-a", "x", "p.a", "hatchet", "2026-01-01T10:00:00Z"},
       {"team-b", "x", "p.b", "hatchet", "2026-01-01T10:00:00Z"},
       "unique-username",
       true,
       "same second"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    json a = Claimant(c.a.ns, c.a.name, c.a.prefix, c.a.user, c.a.created);
    json b = Claimant(c.b.ns, c.b.name, c.b.prefix, c.b.user, c.b.created);
    Context with_b{{b}, {Server()}}, with_a{{a}, {Server()}};
    Report ra = Validate(a, with_b), rb = Validate(b, with_a);
    const Report& winner = c.a_keeps ? ra : rb;
    const Report& loser = c.a_keeps ? rb : ra;
    const Side& kept = c.a_keeps ? c.a : c.b;
    EXPECT_TRUE(winner.ok()) << Dump(winner);
    const Finding* f = Find(loser, c.rule);
    ASSERT_NE(f, nullptr) << Dump(loser);
    EXPECT_NE(f->message.find("PubSubBackend " + kept.ns + "/" + kept.name), std::string::npos)
        << f->message;
    EXPECT_NE(f->message.find(c.because), std::string::npos) << f->message;
    EXPECT_EQ(loser.errors.size(), 1u) << Dump(loser);

    // The same verdict judging both at once, and through an index.
    std::vector<Report> all = ValidateAll({Server(), a, b});
    EXPECT_EQ(all[1].ok(), ra.ok());
    EXPECT_EQ(all[2].ok(), rb.ok());
    ContextIndex index_b(with_b);
    Report indexed = Validate(a, index_b, Operation::kCreate, nullptr, "default");
    ASSERT_EQ(indexed.errors.size(), ra.errors.size());
    for (size_t i = 0; i < ra.errors.size(); ++i) {
      EXPECT_EQ(indexed.errors[i].ToString(), ra.errors[i].ToString());
    }
  }
}

TEST(Conflicts, OfManyTheOldestKeepsItAndEveryOtherNamesIt) {
  json oldest = Claimant("team-m", "m", "shared", "", "2026-01-01T00:00:00Z");
  json middle = Claimant("team-a", "a", "shared", "", "2026-01-02T00:00:00Z");
  json newest = Claimant("team-b", "b", "shared", "", std::nullopt);
  std::vector<Report> all = ValidateAll({Server(), middle, newest, oldest});
  EXPECT_TRUE(all[3].ok()) << Dump(all[3]);
  for (size_t i : {1, 2}) {
    const Finding* f = Find(all[i], "unique-prefix");
    ASSERT_NE(f, nullptr) << i;
    EXPECT_NE(f->message.find("PubSubBackend team-m/m"), std::string::npos) << f->message;
    EXPECT_NE(f->message.find("and 1 more claim it"), std::string::npos) << f->message;
  }
}

TEST(Conflicts, ARotatingBackendsCurrentUserCountsWithItsAge) {
  json rotating = Claimant("team-b", "two", "p.two", "", "2026-01-01T00:00:00Z");
  rotating["status"] = {{"username", "team-b-two-r1"}};
  json newer = Claimant("team-a", "one", "p.one", "team-b-two-r1", "2026-01-02T00:00:00Z");
  EXPECT_NE(Find(Validate(newer, Context{{rotating}, {Server()}}), "unique-username"), nullptr);
  EXPECT_TRUE(Validate(rotating, Context{{newer}, {Server()}}).ok());
}

// An UPDATE that takes a prefix or user name another backend holds is a
// claim made now: refused however old the updated backend is, so a change
// never takes a name from a running backend.
TEST(Conflicts, AnUpdateThatTakesAClaimIsTheNewest) {
  json older_before = Claimant("team-a", "old", "p.old", "", "2026-01-01T00:00:00Z");
  json younger = Claimant("team-b", "young", "p.young", "", "2026-02-01T00:00:00Z");
  json older_after = older_before;
  older_after["spec"]["nats"]["subjectPrefix"] = "p.young";
  Context ctx{{younger}, {Server()}};
  Report r = Validate(older_after, ctx, Operation::kUpdate, &older_before);
  const Finding* f = Find(r, "unique-prefix");
  ASSERT_NE(f, nullptr) << Dump(r);
  EXPECT_NE(f->message.find("PubSubBackend team-b/young (it already holds it"), std::string::npos)
      << f->message;
  // The same through an index (the webhook) and a Batch with the stored
  // version (the CLI given both).
  ContextIndex index(ctx);
  EXPECT_FALSE(Validate(older_after, index, Operation::kUpdate, &older_before, "default").ok());
  std::vector<Report> all = ValidateAll({Server(), older_after, younger}, {}, "default",
                                        {nullptr, &older_before, nullptr});
  EXPECT_FALSE(all[1].ok());
  EXPECT_TRUE(all[2].ok()) << Dump(all[2]);

  // A user name taken by an update, likewise.
  json user_after = older_before;
  user_after["spec"]["nats"]["credentials"] = {{"username", "team-b-young"}};
  EXPECT_NE(Find(Validate(user_after, ctx, Operation::kUpdate, &older_before), "unique-username"),
            nullptr);

  // An update that keeps its prefix keeps its age: the older one may still
  // change other fields while a younger one claims the same prefix.
  json same_second_loser = Claimant("team-b", "x", "p.old", "", "2026-01-01T00:00:00Z");
  json older_touched = older_before;
  older_touched["spec"]["output"] = {{"secretName", "env"}};
  Report kept = Validate(older_touched, Context{{same_second_loser}, {Server()}},
                         Operation::kUpdate, &older_before);
  EXPECT_TRUE(kept.ok()) << Dump(kept);
}

TEST(Conflicts, KeepsClaimIsAStrictOrder) {
  using api::ClaimAge;
  using api::KeepsClaim;
  ClaimAge a{1, {"a", "x"}}, b{1, {"b", "x"}}, c{2, {"a", "a"}}, n{std::nullopt, {"0", "0"}};
  for (const auto& [x, y] :
       std::vector<std::pair<ClaimAge, ClaimAge>>{{a, b}, {a, c}, {b, c}, {c, n}}) {
    EXPECT_TRUE(KeepsClaim(x, y));
    EXPECT_FALSE(KeepsClaim(y, x));
  }
  EXPECT_FALSE(KeepsClaim(a, a));
}

}  // namespace
}  // namespace switchboard::rules
