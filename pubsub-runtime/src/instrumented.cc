#include "switchboard/pubsub/instrumented.h"

#include <prometheus/family.h>
#include <prometheus/histogram.h>

#include <chrono>

namespace switchboard::pubsub {

const std::vector<double>& HatchetPubSubBuckets() {
  static const std::vector<double> kBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                               0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5};
  return kBuckets;
}

namespace {

class Instrumented : public PubSub {
 public:
  Instrumented(std::unique_ptr<PubSub> inner, prometheus::Registry& registry)
      : inner_(std::move(inner)),
        publish_(prometheus::BuildHistogram()
                     .Name("hatchet_pubsub_publish_duration_seconds")
                     .Help("Time to publish a message to the pub/sub backend")
                     .Register(registry)),
        transit_(prometheus::BuildHistogram()
                     .Name("hatchet_pubsub_transit_seconds")
                     .Help("Time from publish to receipt of a pub/sub message")
                     .Register(registry)) {
    // Label sets are resolved once: Add() takes a lock and hashes labels.
    std::string kind(inner_->Kind());
    for (TopicKind tk : {TopicKind::kTenantStream, TopicKind::kSchedulerPartition}) {
      int i = static_cast<int>(tk);
      std::string label(TopicKindLabel(tk));
      ok_[i] = &publish_.Add({{"kind", kind}, {"topic_kind", label}, {"result", "success"}},
                             HatchetPubSubBuckets());
      err_[i] = &publish_.Add({{"kind", kind}, {"topic_kind", label}, {"result", "error"}},
                              HatchetPubSubBuckets());
      transit_by_kind_[i] =
          &transit_.Add({{"kind", kind}, {"topic_kind", label}}, HatchetPubSubBuckets());
    }
  }

  Status Publish(const Topic& topic, const Message& message) override {
    Message stamped = message;  // never mutate the caller's message
    stamped.published_at = Timestamp::Now();
    auto start = std::chrono::steady_clock::now();
    Status s = inner_->Publish(topic, stamped);
    std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    int i = static_cast<int>(topic.kind);
    (s.ok() ? ok_[i] : err_[i])->Observe(took.count());
    return s;
  }

  Result<std::unique_ptr<Subscription>> Subscribe(const Topic& topic, Handler handler) override {
    prometheus::Histogram* transit = transit_by_kind_[static_cast<int>(topic.kind)];
    return inner_->Subscribe(topic, [transit, handler = std::move(handler)](const Message& m) {
      if (!m.published_at.IsZero()) {
        std::chrono::duration<double> age =
            std::chrono::system_clock::now() - m.published_at.ToSystemClock();
        if (age.count() >= 0) transit->Observe(age.count());
      }
      return handler(m);
    });
  }

  bool IsReady() const override { return inner_->IsReady(); }
  std::string_view Kind() const override { return inner_->Kind(); }

 private:
  std::unique_ptr<PubSub> inner_;
  prometheus::Family<prometheus::Histogram>& publish_;
  prometheus::Family<prometheus::Histogram>& transit_;
  prometheus::Histogram* ok_[2];
  prometheus::Histogram* err_[2];
  prometheus::Histogram* transit_by_kind_[2];
};

}  // namespace

std::unique_ptr<PubSub> Instrument(std::unique_ptr<PubSub> inner, prometheus::Registry& registry) {
  return std::make_unique<Instrumented>(std::move(inner), registry);
}

}  // namespace switchboard::pubsub
