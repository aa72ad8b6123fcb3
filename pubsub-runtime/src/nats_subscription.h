// A subscription over nats.c: the message trampoline (owns and destroys
// each natsMsg, decodes, decompresses, calls the handler, lets nothing
// escape into C) and the RAII Subscription that unsubscribes, waits until
// nats.c's delivery thread has left its loop (on-complete callback), and
// hands the nats.c handle to its Connection to destroy once the reader
// cannot hold it (Connection::Retire).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "latch.h"
#include "nats_connection.h"
#include "switchboard/pubsub/nats_client.h"
#include "switchboard/pubsub/pubsub.h"

namespace switchboard::pubsub::internal {

// Subscribes `conn` to `subject` and flushes (interest exists on the server
// when this returns). Decompressed payloads are capped at
// `max_decompressed` bytes per message.
Result<std::unique_ptr<Subscription>> SubscribeNats(std::shared_ptr<Connection> conn,
                                                    const std::string& subject, Handler handler,
                                                    size_t max_decompressed,
                                                    std::chrono::milliseconds flush_timeout);

// The same for raw messages (NatsClient): `queue` empty for a plain
// subscription, else a queue group's name.
Result<std::unique_ptr<Subscription>> SubscribeNatsRaw(std::shared_ptr<Connection> conn,
                                                       const std::string& subject,
                                                       const std::string& queue, RawHandler handler,
                                                       std::chrono::milliseconds flush_timeout);

}  // namespace switchboard::pubsub::internal
