#include "switchboard/pubsub/topic.h"

#include <gtest/gtest.h>

namespace switchboard::pubsub {
namespace {

TEST(TopicTest, TenantStreamIsLowercaseUuidV1) {
  auto t = Topic::TenantStream("8F3B1C2D-4E5F-4A6B-8C7D-9E0F1A2B3C4D");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->name, "8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d_v1");
  EXPECT_EQ(t->kind, TopicKind::kTenantStream);
  EXPECT_FALSE(Topic::TenantStream("tenant-a").ok());
  EXPECT_FALSE(Topic::TenantStream("").ok());
}

TEST(TopicTest, SchedulerPartition) {
  auto t = Topic::SchedulerPartition("partition-7");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->name, "partition-7_scheduler_v1");
  EXPECT_EQ(t->kind, TopicKind::kSchedulerPartition);
  EXPECT_EQ(TopicKindLabel(t->kind), "scheduler-partition");
  EXPECT_FALSE(Topic::SchedulerPartition("a.b").ok());
  EXPECT_FALSE(Topic::SchedulerPartition("").ok());
}

TEST(TopicTest, FromNameInfersKind) {
  EXPECT_EQ(Topic::FromName("x_scheduler_v1")->kind, TopicKind::kSchedulerPartition);
  EXPECT_EQ(Topic::FromName("x_v1")->kind, TopicKind::kTenantStream);
}

TEST(TopicTest, NamesThatEscapeTheirTokenAreRefused) {
  for (const char* bad : {"", "a.b", "*", ">", "a*", "a>", "a b", "a\tb", "a\nb", ".", "a."}) {
    auto s = ValidateTopicName(bad);
    EXPECT_FALSE(s.ok()) << '"' << bad << '"';
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("topic name"), std::string::npos);
  }
  EXPECT_TRUE(ValidateTopicName("8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d_v1").ok());
}

TEST(TopicTest, PrefixValidation) {
  for (const char* good : {"hatchet.pubsub", "hatchet", "team-a.hatchet.pubsub", "a_b.c-d"}) {
    EXPECT_TRUE(ValidateSubjectPrefix(good).ok()) << good;
  }
  for (const char* bad : {"", ".a", "a.", "a..b", "a.*", "a.>", "a b", "*", ">", "a.\tb"}) {
    auto s = ValidateSubjectPrefix(bad);
    EXPECT_FALSE(s.ok()) << '"' << bad << '"';
    EXPECT_NE(s.message().find("subject prefix"), std::string::npos);
  }
}

TEST(TopicTest, SubjectIsPrefixDotName) {
  auto t = Topic::FromName("p1_scheduler_v1");
  auto s = Subject("hatchet.team-a", *t);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, "hatchet.team-a.p1_scheduler_v1");
  EXPECT_FALSE(Subject("hatchet.>", *t).ok());
  EXPECT_FALSE(Subject("hatchet", Topic{TopicKind::kTenantStream, "a.b"}).ok());
}

}  // namespace
}  // namespace switchboard::pubsub
