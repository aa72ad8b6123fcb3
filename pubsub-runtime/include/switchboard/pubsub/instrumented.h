// A PubSub decorator recording Hatchet's two histograms through
// prometheus-cpp (same names, labels and buckets as the Go engine):
//   hatchet_pubsub_publish_duration_seconds{kind,topic_kind,result}
//   hatchet_pubsub_transit_seconds{kind,topic_kind}
// Publish stamps published_at on a copy (the caller's message is never
// changed); received messages carrying published_at feed the transit time.
#pragma once

#include <prometheus/registry.h>

#include <memory>

#include "switchboard/pubsub/pubsub.h"

namespace switchboard::pubsub {

// Bucket bounds in seconds, shared by both histograms.
const std::vector<double>& HatchetPubSubBuckets();

// Wraps `inner`; the metric families are registered in `registry` (created
// once per registry and shared by every decorator using it).
std::unique_ptr<PubSub> Instrument(std::unique_ptr<PubSub> inner, prometheus::Registry& registry);

}  // namespace switchboard::pubsub
