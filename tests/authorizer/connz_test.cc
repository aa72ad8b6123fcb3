#include "switchboard/authorizer/connz.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace switchboard::authorizer {
namespace {

using nlohmann::json;

TEST(ConnzTest, RequestsAndSubjects) {
  EXPECT_EQ(json::parse(ConnzRequest("HATCHET", 2048)),
            json::parse(R"({"auth":true,"acc":"HATCHET","offset":2048,"limit":1024})"));
  EXPECT_EQ(PingConnzSubject(), "$SYS.REQ.SERVER.PING.CONNZ");
  EXPECT_EQ(ServerConnzSubject("NABC"), "$SYS.REQ.SERVER.NABC.CONNZ");
  EXPECT_EQ(KickSubject("NABC"), "$SYS.REQ.SERVER.NABC.KICK");
  EXPECT_EQ(json::parse(KickRequest(42)), json::parse(R"({"cid":42})"));
}

TEST(ConnzTest, ParsesAPage) {
  auto page = ParseConnzReply(R"({
    "server": {"name": "n1", "id": "NSERVER"},
    "data": {"server_id": "NSERVER", "num_connections": 2, "total": 5, "offset": 0, "limit": 2,
             "connections": [
               {"cid": 7, "account": "HATCHET", "authorized_user": "team-a-hatchet#0", "name": "engine"},
               {"cid": 9, "account": "HATCHET"},
               {"cid": "bad"}]}})");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->server_id, "NSERVER");
  EXPECT_EQ(page->total, 5);
  EXPECT_EQ(page->offset, 0);
  ASSERT_EQ(page->connections.size(), 2u);
  EXPECT_EQ(page->connections[0].server_id, "NSERVER");
  EXPECT_EQ(page->connections[0].cid, 7u);
  EXPECT_EQ(page->connections[0].account, "HATCHET");
  EXPECT_EQ(page->connections[0].name,
            "team-a-hatchet#0");  // the authorized user, not the client name
  EXPECT_EQ(page->connections[1].name, "");
}

TEST(ConnzTest, RefusedAndMalformedReplies) {
  struct Case {
    const char* body;
    StatusCode code;
  };
  for (const auto& c : std::vector<Case>{
           {"", StatusCode::kInvalidArgument},
           {"[]", StatusCode::kInvalidArgument},
           {R"({"server":{"id":"N1"}})", StatusCode::kInvalidArgument},
           {R"({"data":{"connections":[]}})", StatusCode::kInvalidArgument},
           {R"({"server":{"id":"N1"},"error":{"code":500,"description":"boom"}})",
            StatusCode::kUnavailable},
       }) {
    SCOPED_TRACE(c.body);
    EXPECT_EQ(ParseConnzReply(c.body).status().code(), c.code);
  }
  // The server id from the server block when data has none.
  auto page = ParseConnzReply(R"({"server":{"id":"N1"},"data":{"total":0}})");
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->server_id, "N1");
}

TEST(ConnzTest, KickReplies) {
  EXPECT_TRUE(ParseKickReply(R"({"server":{"id":"N1"}})").ok());
  EXPECT_EQ(
      ParseKickReply(
          R"({"server":{"id":"N1"},"error":{"code":500,"description":"no such client or leafnode id"}})")
          .code(),
      StatusCode::kNotFound);
  EXPECT_EQ(ParseKickReply(R"({"error":{"code":500,"description":"other"}})").code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(ParseKickReply("x").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace switchboard::authorizer
