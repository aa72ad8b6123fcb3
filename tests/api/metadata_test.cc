// Metadata accessors on JSON of any shape: values when present and of the
// right type, empty otherwise, never a throw.
#include "switchboard/api/metadata.h"

#include <gtest/gtest.h>

namespace switchboard::api {
namespace {

using nlohmann::json;

TEST(Metadata, ReadsWhatIsThere) {
  json o = json::parse(R"({"kind": "PubSubBackend", "metadata": {
    "name": "h", "namespace": "team-a", "uid": "u-1", "resourceVersion": "42", "generation": 3,
    "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["a", "pubsub.switchboard.dev/cleanup"],
    "annotations": {"x": "1", "y": 2}}})");
  EXPECT_EQ(NameOf(o), "h");
  EXPECT_EQ(NamespaceOf(o), "team-a");
  EXPECT_EQ(KindOf(o), "PubSubBackend");
  EXPECT_EQ(UidOf(o), "u-1");
  EXPECT_EQ(ResourceVersionOf(o), "42");
  EXPECT_EQ(GenerationOf(o), 3);
  EXPECT_TRUE(IsDeleting(o));
  EXPECT_TRUE(HasFinalizer(o, "pubsub.switchboard.dev/cleanup"));
  EXPECT_FALSE(HasFinalizer(o, "b"));
  EXPECT_TRUE(HasAnnotation(o, "x"));
  EXPECT_TRUE(HasAnnotation(o, "y"));
  EXPECT_EQ(Annotation(o, "x"), "1");
  EXPECT_EQ(Annotation(o, "y"), "") << "not a string";
  EXPECT_FALSE(HasAnnotation(o, "z"));
}

TEST(Metadata, OddShapesReadAsEmpty) {
  for (const char* text : {R"(null)", R"([1])", R"("s")", R"({})", R"({"metadata": 1})",
                           R"({"metadata": {"name": 1, "namespace": [], "uid": {}, "generation":
                               "3", "deletionTimestamp": null, "finalizers": "a",
                               "annotations": []}, "kind": 7})"}) {
    json o = json::parse(text);
    EXPECT_EQ(NameOf(o), "") << text;
    EXPECT_EQ(NamespaceOf(o), "") << text;
    EXPECT_EQ(KindOf(o), "") << text;
    EXPECT_EQ(UidOf(o), "") << text;
    EXPECT_EQ(ResourceVersionOf(o), "") << text;
    EXPECT_EQ(GenerationOf(o), 0) << text;
    EXPECT_FALSE(IsDeleting(o)) << text;
    EXPECT_FALSE(HasFinalizer(o, "a")) << text;
    EXPECT_FALSE(HasAnnotation(o, "a")) << text;
    EXPECT_EQ(Annotation(o, "a"), "") << text;
  }
}

}  // namespace
}  // namespace switchboard::api
