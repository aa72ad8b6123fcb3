// The HTTPS server: Boost.Beast on Asio over OpenSSL. The only translation
// unit that includes Beast's stream and Asio's SSL headers.
//
// `worker_threads` event loops (an io_context each, run by one thread);
// every connection is a chain of asynchronous operations on one loop,
// handed out round robin, so an open socket costs memory (a few kilobytes
// plus OpenSSL's state), never a thread, and a connection's handlers never
// run concurrently. One loop per thread rather than one shared by all: no
// lock and no hand-off between threads on the path of a request (a shared
// io_context cost ~2x the CPU per review with 16 threads). Each phase has a
// deadline (Connection::SetDeadline):
//   handshake            request_timeout
//   idle (keep-alive)    idle_timeout, until the first byte of a request
//   request              request_timeout from its first byte to its last,
//                        however slowly the bytes come
//   response             request_timeout
#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "connection_table.h"
#include "http_handler.h"
#include "http_reader.h"
#include "switchboard/common/log.h"
#include "switchboard/webhook_server/cert_reloader.h"
#include "switchboard/webhook_server/server.h"

namespace switchboard::webhook_server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// Bytes asked from the TLS stream per read: one TLS record.
constexpr size_t kReadChunk = 16u << 10;
// After refusing a request whose body was not read (413, 400, 431), the
// connection keeps reading and discarding for this long or this much, so
// that the client reads the answer instead of a TCP reset.
constexpr auto kLingerTime = std::chrono::seconds(1);
constexpr size_t kLingerBytes = 1u << 20;

// At most one warning per second for events an attacker can repeat at will.
class RateLimitedLog {
 public:
  bool Allow() {
    int64_t now = Clock::now().time_since_epoch().count();
    int64_t last = last_.load(std::memory_order_relaxed);
    if (now - last < std::chrono::nanoseconds(std::chrono::seconds(1)).count()) return false;
    return last_.compare_exchange_strong(last, now);
  }

 private:
  std::atomic<int64_t> last_{0};
};

}  // namespace

struct WebhookServer::Impl {
  explicit Impl(int threads) {
    for (int i = 0; i < threads; ++i) {
      // Concurrency hint 1: each loop is run by one thread (other threads
      // only post to it), which lets Asio skip most locking.
      loops.push_back(std::make_unique<asio::io_context>(1));
      work.emplace_back(loops.back()->get_executor());
    }
    acceptor.emplace(*loops[0]);
    accept_retry.emplace(*loops[0]);
  }

  // First, so that the loops outlive everything bound to them.
  std::vector<std::unique_ptr<asio::io_context>> loops;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> work;
  ServerOptions options;
  Metrics* metrics = nullptr;
  std::unique_ptr<CertReloader> certs;
  std::unique_ptr<RequestHandler> handler;

  ssl::context tls{ssl::context::tls_server};
  std::optional<tcp::acceptor> acceptor;           // on loops[0]
  std::optional<asio::steady_timer> accept_retry;  // on loops[0]
  size_t next_loop = 0;                            // used on loops[0] only
  std::vector<std::thread> threads;
  ConnectionTable connections;
  RateLimitedLog limit_log;
  std::atomic<bool> stopping{false};
  int port = 0;

  void Accept();
  void OnAccept(beast::error_code ec, tcp::socket socket);
};

namespace {

class Connection : public TrackedConnection, public std::enable_shared_from_this<Connection> {
 public:
  Connection(WebhookServer::Impl& server, tcp::socket socket)
      : server_(server),
        stream_(std::move(socket), server.tls),
        deadline_timer_(stream_.get_executor()),
        reader_(HttpLimits{server.options.max_body_bytes}) {
    beast::error_code ec;
    auto peer = tcp_layer().socket().remote_endpoint(ec);
    if (!ec) remote_ = peer.address().to_string() + ":" + std::to_string(peer.port());
    MarkIdle(Phase::kHandshake);
    server_.metrics->ConnectionOpened();
  }

  ~Connection() override {
    server_.connections.Remove(id_);
    server_.metrics->ConnectionClosed();
  }

  // Counted from the moment it is accepted, on the accepting thread: were it
  // counted only in Start(), on its own loop, accepts in between would all
  // pass the --max-connections check and the cap would be exceeded for good.
  void Register() { id_ = server_.connections.Add(weak_from_this()); }

  void Start() {
    SetDeadline(server_.options.request_timeout);
    stream_.async_handshake(
        ssl::stream_base::server,
        [self = shared_from_this()](beast::error_code ec) { self->OnHandshake(ec); });
  }

  asio::any_io_executor executor() { return stream_.get_executor(); }

  std::optional<Clock::time_point> IdleSince() const override {
    if (evicting_.load()) return std::nullopt;
    Phase phase = phase_.load();
    if (phase != Phase::kHandshake && phase != Phase::kIdle) return std::nullopt;
    return Clock::time_point(Clock::duration(idle_since_.load()));
  }

  void Evict() override {
    evicting_ = true;
    asio::post(stream_.get_executor(), [self = shared_from_this()] {
      Phase phase = self->phase_.load();
      if (phase == Phase::kHandshake || phase == Phase::kIdle) {
        self->Close();
      } else {
        self->evicting_ = false;  // a request started meanwhile: let it finish
      }
    });
  }

  void Shutdown() override {
    asio::post(stream_.get_executor(), [self = shared_from_this()] {
      Phase phase = self->phase_.load();
      if (phase == Phase::kHandshake || phase == Phase::kIdle) self->Close();
      // Otherwise the request in flight is answered with "Connection: close".
    });
  }

 private:
  enum class Phase { kHandshake, kIdle, kBusy, kClosed };

  beast::tcp_stream& tcp_layer() { return beast::get_lowest_layer(stream_); }

  // The deadline of the current phase, from now. The timer is re-armed only
  // when the new deadline comes before the one it waits for: a later one is
  // noticed when the timer fires (OnDeadline waits again). Re-arming on
  // every read and write, as a per-operation timeout does, costs the loop a
  // timerfd_settime system call each time; this way a busy keep-alive
  // connection re-arms about once per timeout period.
  void SetDeadline(Clock::duration timeout) {
    deadline_ = Clock::now() + timeout;
    if (!timer_armed_ || deadline_ < timer_expiry_) Arm(deadline_);
  }

  void Arm(Clock::time_point when) {
    timer_armed_ = true;
    timer_expiry_ = when;
    deadline_timer_.expires_at(when);  // a pending wait ends with operation_aborted
    deadline_timer_.async_wait(
        [self = shared_from_this()](beast::error_code ec) { self->OnDeadline(ec); });
  }

  void OnDeadline(beast::error_code ec) {
    if (ec == asio::error::operation_aborted || phase_.load() == Phase::kClosed) return;
    timer_armed_ = false;
    if (Clock::now() < deadline_) return Arm(deadline_);  // moved on meanwhile
    timed_out_ = true;
    Close();  // the operation in flight ends with an error and sees timed_out_
  }

  void MarkIdle(Phase phase) {
    idle_since_ = Clock::now().time_since_epoch().count();
    phase_ = phase;
  }

  void OnHandshake(beast::error_code ec) {
    if (ec) return Close();  // scanners, wrong versions, timeouts: nothing to answer
    MarkIdle(Phase::kIdle);
    ReadSome();
  }

  void ReadSome() {
    if (!reader_.started()) {
      if (server_.stopping.load()) return Close();
      SetDeadline(server_.options.idle_timeout);
    }
    // Otherwise the deadline set at the request's first byte keeps running.
    stream_.async_read_some(
        reader_.Prepare(kReadChunk),
        [self = shared_from_this()](beast::error_code ec, size_t n) { self->OnRead(ec, n); });
  }

  void OnRead(beast::error_code ec, size_t n) {
    if (ec) {
      if (timed_out_ && reader_.started()) {
        server_.metrics->ObserveRejected("request_timeout");
        if (server_.limit_log.Allow()) {
          log::Warn("webhook", "request not complete within --request-timeout; connection closed",
                    {{"remote", remote_}, {"timeout_ms", server_.options.request_timeout.count()}});
        }
      }
      return Close();
    }
    if (!reader_.started() && n > 0) {
      // The request's deadline runs from its first byte.
      phase_ = Phase::kBusy;
      SetDeadline(server_.options.request_timeout);
    }
    reader_.Commit(n);
    Process();
  }

  void Process() {
    switch (reader_.Parse()) {
      case RequestReader::State::kNeedMore:
        return ReadSome();
      case RequestReader::State::kComplete: {
        HttpRequest request = reader_.TakeRequest();
        bool keep_alive = request.keep_alive && !server_.stopping.load();
        return Write(server_.handler->Handle(request, remote_), request.version, keep_alive, false);
      }
      case RequestReader::State::kRefused:
        return Write(server_.handler->Refused(reader_.refusal(), remote_), 11, false, true);
    }
  }

  void Write(HttpResponse response, int version, bool keep_alive, bool linger) {
    phase_ = Phase::kBusy;
    response_ = {};
    response_.result(static_cast<unsigned>(response.status));
    response_.version(version);
    response_.set(http::field::content_type, response.content_type);
    response_.keep_alive(keep_alive);
    response_.body() = std::move(response.body);
    response_.prepare_payload();
    SetDeadline(server_.options.request_timeout);
    http::async_write(stream_, response_,
                      [self = shared_from_this(), linger](beast::error_code ec, size_t) {
                        self->OnWrite(ec, linger);
                      });
  }

  void OnWrite(beast::error_code ec, bool linger) {
    bool keep_alive = response_.keep_alive();
    response_ = {};  // free the body now, not at the next response
    if (ec) return Close();
    if (linger) return Linger();
    if (!keep_alive) return Close();
    MarkIdle(Phase::kIdle);
    if (reader_.started()) {
      // Pipelined: the next request's first bytes are already here.
      phase_ = Phase::kBusy;
      SetDeadline(server_.options.request_timeout);
      return Process();
    }
    ReadSome();
  }

  // Half-closes and discards what the client still sends, for a bounded
  // time and size, then closes.
  void Linger() {
    beast::error_code ignored;
    tcp_layer().socket().shutdown(tcp::socket::shutdown_send, ignored);
    SetDeadline(kLingerTime);
    Drain();
  }

  void Drain() {
    tcp_layer().async_read_some(asio::buffer(drain_),
                                [self = shared_from_this()](beast::error_code ec, size_t n) {
                                  self->drained_ += n;
                                  if (ec || self->drained_ > kLingerBytes) return self->Close();
                                  self->Drain();
                                });
  }

  // Closes the socket without a TLS close_notify: sending one is a write
  // that a client which does not read could stall, and every response has
  // a Content-Length, so no client needs it to find the end of a body.
  void Close() {
    if (phase_.load() == Phase::kClosed) return;
    phase_ = Phase::kClosed;
    deadline_timer_.cancel();
    tcp_layer().close();  // cancels pending operations; their handlers end the chain
  }

  WebhookServer::Impl& server_;
  beast::ssl_stream<beast::tcp_stream> stream_;
  asio::steady_timer deadline_timer_;
  Clock::time_point deadline_{};      // of the current phase
  Clock::time_point timer_expiry_{};  // what deadline_timer_ waits for
  bool timer_armed_ = false;
  bool timed_out_ = false;  // closed by its deadline
  RequestReader reader_;
  http::response<http::string_body> response_;
  std::string remote_;
  uint64_t id_ = 0;
  std::array<char, 4096> drain_{};
  size_t drained_ = 0;
  // Read by the accepting thread (ConnectionTable), written on the loop.
  std::atomic<Phase> phase_{Phase::kHandshake};
  std::atomic<Clock::rep> idle_since_{0};
  std::atomic<bool> evicting_{false};
};

}  // namespace

void WebhookServer::Impl::Accept() {
  asio::io_context& loop = *loops[next_loop++ % loops.size()];
  acceptor->async_accept(
      loop, [this](beast::error_code ec, tcp::socket socket) { OnAccept(ec, std::move(socket)); });
}

void WebhookServer::Impl::OnAccept(beast::error_code ec, tcp::socket socket) {
  if (stopping.load() || ec == asio::error::operation_aborted) return;
  if (ec) {
    // Typically EMFILE: out of file descriptors. Free one by closing an idle
    // connection and try again shortly instead of spinning on the error.
    metrics->ObserveRejected("accept_error");
    if (limit_log.Allow()) {
      log::Warn("webhook",
                "cannot accept a connection; lower --max-connections or raise the "
                "open-files limit",
                {{"error", ec.message()}});
    }
    connections.EvictOldestIdle();
    accept_retry->expires_after(std::chrono::milliseconds(50));
    accept_retry->async_wait([this](beast::error_code wait_ec) {
      if (!wait_ec && !stopping.load()) Accept();
    });
    return;
  }
  if (connections.size() >= options.max_connections && !connections.EvictOldestIdle()) {
    // Every slot holds a request in progress; each ends by its deadline.
    metrics->ObserveRejected("connection_limit");
    if (limit_log.Allow()) {
      log::Warn("webhook", "connection refused: --max-connections reached, none idle",
                {{"max_connections", options.max_connections}});
    }
    beast::error_code ignored;
    socket.close(ignored);
  } else {
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    auto connection = std::make_shared<Connection>(*this, std::move(socket));
    connection->Register();
    // Started on its own loop, so that all its handlers run there.
    asio::post(connection->executor(), [connection] { connection->Start(); });
  }
  Accept();
}

WebhookServer::WebhookServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

WebhookServer::~WebhookServer() { Stop(); }

int WebhookServer::port() const { return impl_->port; }

int WebhookServer::connections() const { return impl_->connections.size(); }

void WebhookServer::Stop() {
  if (impl_->stopping.exchange(true)) return;
  asio::post(*impl_->loops[0], [impl = impl_.get()] {
    beast::error_code ignored;
    impl->acceptor->close(ignored);
    impl->accept_retry->cancel();
  });
  impl_->connections.ShutdownAll();
  for (auto& w : impl_->work) w.reset();
  // The threads return once the last connection has closed: idle ones at
  // once, requests in flight within their deadline.
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
}

Result<std::unique_ptr<WebhookServer>> WebhookServer::Start(
    const ServerOptions& options, const webhook_admission::ContextSource& context,
    Metrics& metrics) {
  // One loop per CPU by default, at most 16: on a large node a webhook has
  // no use for more (and a CPU limit does not change hardware_concurrency).
  int threads = options.worker_threads > 0
                    ? options.worker_threads
                    : std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 16);
  auto impl = std::make_unique<Impl>(threads);
  impl->options = options;
  impl->metrics = &metrics;
  impl->handler = std::make_unique<RequestHandler>(options.max_body_bytes, context, metrics);

  auto certs = CertReloader::Create(options.cert_file, options.key_file);
  if (!certs.ok()) return certs.status();
  impl->certs = std::move(certs).value();
  metrics.SetCertificateExpiry(impl->certs->NotAfter());
  impl->certs->SetObserver([m = &metrics, c = impl->certs.get()](bool ok) {
    m->ObserveCertReload(ok);
    if (ok) m->SetCertificateExpiry(c->NotAfter());
  });

  SSL_CTX* ctx = impl->tls.native_handle();
  // TLS 1.2 is the floor (the API server speaks 1.2 and 1.3); no
  // renegotiation, no compression. Idle connections give their read and
  // write buffers back (about 34 KiB each) until the next record.
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(
      ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  SB_RETURN_IF_ERROR(impl->certs->Install(ctx));

  beast::error_code ec;
  auto address = asio::ip::make_address(options.bind_address, ec);
  if (ec) {
    return Status::InvalidArgument("--bind-address " + options.bind_address +
                                   " is not an IP address");
  }
  tcp::endpoint endpoint(address, static_cast<unsigned short>(options.port));
  std::string where = options.bind_address + ":" + std::to_string(options.port);
  tcp::acceptor& acceptor = *impl->acceptor;
  if (acceptor.open(endpoint.protocol(), ec);
      !ec && (acceptor.set_option(asio::socket_base::reuse_address(true), ec), !ec) &&
      (acceptor.bind(endpoint, ec), !ec)) {
    acceptor.listen(asio::socket_base::max_listen_connections, ec);
  }
  if (ec) {
    return Status::Unavailable("cannot listen on " + where + ": " + ec.message() +
                               "; pick another --port or --bind-address");
  }
  impl->port = acceptor.local_endpoint().port();

  impl->Accept();
  for (int i = 0; i < threads; ++i) {
    asio::io_context* loop = impl->loops[static_cast<size_t>(i)].get();
    impl->threads.emplace_back([loop] {
      // Handlers do not throw; anything that escapes (bad_alloc) is logged
      // and the loop resumes, so one request cannot stop the server.
      for (;;) {
        try {
          loop->run();
          return;
        } catch (const std::exception& e) {
          log::Error("webhook", "unexpected exception in the server loop", {{"error", e.what()}});
        }
      }
    });
  }
  log::Info("webhook", "serving HTTPS",
            {{"address", options.bind_address},
             {"port", impl->port},
             {"threads", threads},
             {"max_body_bytes", options.max_body_bytes},
             {"max_connections", options.max_connections},
             {"request_timeout_ms", options.request_timeout.count()},
             {"idle_timeout_ms", options.idle_timeout.count()},
             {"certificate_sha256", impl->certs->Fingerprint()}});
  return std::unique_ptr<WebhookServer>(new WebhookServer(std::move(impl)));
}

}  // namespace switchboard::webhook_server
