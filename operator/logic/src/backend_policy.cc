#include "switchboard/operator_logic/backend_policy.h"

#include <algorithm>
#include <variant>

#include "switchboard/operator_logic/conditions.h"

namespace switchboard::operator_logic {
namespace {

using std::chrono::milliseconds;

// A Go-style duration for messages: "2m0s", "90s" reads as "1m30s".
std::string Duration(milliseconds d) {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (s < 60) return std::to_string(s) + "s";
  return std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
}

// A probe refused at a connection limit, in the operator's words (the
// probe's message, pubsub's, speaks of NATS, not of the API's fields):
// the server's own limit (checked before the credentials), or else the
// installation's account's, the limit the operator sets.
ProbeFailureStep ConnectionLimitStep(const ProbeFailureFacts& f) {
  ProbeFailureStep s;
  s.reason = reasons::kConnectionLimitReached;
  s.retry = f.failure_retry;
  if (f.server_connection_limit) {
    s.message = "NatsServer " + f.server +
                " refused the probe's connection at the NATS server's own connection limit "
                "(max_connections in its configuration, for all of its clients): engines "
                "already connected keep working, but no new engine replica can connect; raise "
                "the NATS server's max_connections";
    return s;
  }
  const std::string limit = f.max_connections
                                ? "maxConnections: " + std::to_string(*f.max_connections)
                                : "maxConnections";
  s.message = "NatsServer " + f.server + " accepted user " + f.user +
              "'s credentials but refused the probe's connection: the installation's account is "
              "at its connection limit (" +
              limit +
              ", across the cluster). Engines already connected keep working, but no new engine "
              "replica can connect; raise spec.nats.limits.maxConnections (or NatsServer " +
              f.server +
              "'s spec.installationLimits.maxConnections) above the number of engine replicas plus "
              "one for the operator's probe";
  return s;
}

}  // namespace

InFileStep DecideInFile(const InFileFacts& f) {
  if (f.left_out) {
    std::string message = f.left_out->message;
    if (f.env_user_in && !f.probe_user_in) {
      message += "; engines keep the env Secret's user " + f.env_user + ", which is still rendered";
    }
    return {InFile::kLeftOut, f.left_out->reason, std::move(message)};
  }
  if (f.probe_user_in || f.env_user_in) return {InFile::kProceed, "", ""};
  if (!f.has_status || !f.server_rendered) return {InFile::kWait, "", ""};
  return {InFile::kReport, std::string(reasons::kConfigNotReloaded),
          "the user is not yet in NatsServer " + f.server + "'s config Secret " + f.config_secret};
}

namespace {

// A refusal of the user (credentials, permissions) or a timeout: what a
// user the server does not know yet gets.
bool IsRefusal(StatusCode code) {
  return code == StatusCode::kUnauthenticated || code == StatusCode::kPermissionDenied ||
         code == StatusCode::kTimeout;
}

// Through the file: ConfigNotReloaded while the server may not have loaded
// the user yet, else what the code says.
ProbeFailureStep RefusedThrough(const ThroughFile& file, const ProbeFailureFacts& f) {
  const bool refusal = IsRefusal(f.code);
  std::string why;
  if (refusal) {
    if (!file.user_in_config) {
      why = "user " + f.user + " is not in NatsServer " + f.server + "'s config Secret yet";
    } else if (file.load == ConfigLoad::kPending) {
      why = "NatsServer " + f.server + " has not loaded the config that carries user " + f.user +
            " yet (its reloader reports an earlier one)";
    } else if (file.load != ConfigLoad::kLoaded && f.user_waiting < file.load_window) {
      why = "NatsServer " + f.server + " has not loaded user " + f.user +
            " yet: a NATS pod sees its config Secret change only after the kubelet's volume "
            "sync (up to about a minute) and its config reloader; the probe is retried, and a "
            "refusal " +
            Duration(file.load_window) + " after the user was rendered counts as " +
            std::string(f.code == StatusCode::kTimeout            ? reasons::kServerUnreachable
                        : f.code == StatusCode::kPermissionDenied ? reasons::kPermissionDenied
                                                                  : reasons::kAuthFailed);
    }
  }
  ProbeFailureStep s;
  if (!why.empty()) {
    s.reason = reasons::kConfigNotReloaded;
    s.message = std::move(why);
    s.report = f.has_status;
    s.retry = std::clamp(f.user_waiting / 8, f.reload_retry,
                         std::max(f.reload_retry, timing::kReloadRetryMax));
    return s;
  }
  s.reason = ProbeFailureReason(f.code, false);
  s.message = f.probe_message;
  if (refusal && file.user_in_config) {
    s.message += file.load == ConfigLoad::kLoaded
                     ? " (the server's reloader reports a config that carries user " + f.user + ")"
                     : " (user " + f.user + " has been in NatsServer " + f.server +
                           "'s config Secret for over " + Duration(file.load_window) +
                           ": check that its NATS pods include that file)";
  }
  s.retry = f.failure_retry;
  return s;
}

// Through the authorizers: AuthorizerPending while their caches may still
// be catching up with the credentials Secret, else what the code says.
ProbeFailureStep RefusedThrough(const ThroughAuthorizers& a, const ProbeFailureFacts& f) {
  const bool refusal = IsRefusal(f.code);
  ProbeFailureStep s;
  if (refusal && f.user_waiting < a.authorizer_patience) {
    s.reason = reasons::kAuthorizerPending;
    s.retry =
        std::clamp(f.user_waiting / 8, f.reload_retry, std::max(f.reload_retry, a.callout_retry));
    if (f.user_waiting < a.authorizer_sync) {
      s.message = "the authorizer of NatsServer " + f.server + " has not seen user " + f.user +
                  "'s credentials yet (its caches follow the credentials Secret within " +
                  Duration(a.authorizer_sync) + "); the probe is retried";
      s.report = f.has_status;
      return s;
    }
    // Past the usual sync time the authorizer's watch may still lag (a
    // loaded API server or authorizer): not the user's fault yet.
    s.message = "the authorizer of NatsServer " + f.server + " still refuses user " + f.user +
                "'s credentials, written less than " + Duration(a.authorizer_patience) +
                " ago: its caches normally follow the credentials Secret within " +
                Duration(a.authorizer_sync) +
                " but may lag under load; the probe is retried every " +
                Duration(std::max(f.reload_retry, a.callout_retry)) +
                " or sooner, and a refusal after " + Duration(a.authorizer_patience) +
                " counts as " + std::string(ProbeFailureReason(f.code, false));
    s.report = true;
    return s;
  }
  s.reason = ProbeFailureReason(f.code, false);
  s.message = f.probe_message;
  if (refusal) {
    s.message += " (user " + f.user + "'s credentials Secret was written over " +
                 Duration(a.authorizer_patience) +
                 " ago: check that an authorizer serves NatsServer " + f.server +
                 ", its AuthorizerAvailable condition and the authorizer's log)";
  }
  s.retry = f.failure_retry;
  return s;
}

}  // namespace

ProbeFailureStep DecideProbeFailure(const ProbeFailureFacts& f) {
  if (f.code == StatusCode::kResourceExhausted) return ConnectionLimitStep(f);
  return std::visit([&](const auto& path) { return RefusedThrough(path, f); }, f.path);
}

std::optional<milliseconds> DecideProbeRetry(const ProbeFailureFacts& f) {
  // Through the file the reconcile decides (a reload to wait for).
  const auto* authorizers = std::get_if<ThroughAuthorizers>(&f.path);
  if (authorizers == nullptr || f.code == StatusCode::kOk) return std::nullopt;
  const ProbeFailureStep s = DecideProbeFailure(f);
  // Past the usual sync window the user is told (AuthorizerPending in the
  // status), so the reconcile takes the outcome and retries from there.
  if (s.reason != reasons::kAuthorizerPending || f.user_waiting >= authorizers->authorizer_sync) {
    return std::nullopt;
  }
  return s.retry;
}

namespace {

// Time left of a stored passing probe that describes this very setup.
std::optional<milliseconds> TrustedStoredProbe(const ProbeFacts& f) {
  const nlohmann::json& st = f.stored_status;
  if (!st.is_object()) return std::nullopt;
  const auto ready = ConditionOf(st, condition_types::kReady);
  if (!ready || ready->status != "True" || ready->reason != reasons::kProbed) {
    return std::nullopt;
  }
  auto last = ParseTime(st.value("lastProbeTime", ""));
  if (st.value("observedGeneration", int64_t{-1}) != f.generation ||
      st.value("envSecretHash", "") != f.env_secret_hash ||
      st.value("username", "") != f.username || !last.ok()) {
    return std::nullopt;
  }
  const auto age = std::chrono::duration_cast<milliseconds>(f.now - *last);
  if (age >= f.interval) return std::nullopt;
  return f.interval - age;
}

// What the way the user reaches the server changes in DecideProbe: whether
// a reloader's report holds the probe back (and for how long), and who a
// Staged rotation's new user waits for.
struct ProbeBearing {
  std::optional<milliseconds> wait_for_load;
  std::string staged_waits_for;
};

ProbeBearing BearingOf(const ThroughFile& file, const ProbeFacts& f) {
  ProbeBearing b;
  if (file.load == ConfigLoad::kPending) {
    b.wait_for_load = std::max(milliseconds(100), file.load_patience_left);
  }
  b.staged_waits_for = "the server accepts user " + f.failure.user;
  return b;
}

ProbeBearing BearingOf(const ThroughAuthorizers&, const ProbeFacts& f) {
  // No reload to wait for.
  return {std::nullopt, "the authorizer accepts user " + f.failure.user + "'s new password"};
}

}  // namespace

ProbeStep DecideProbe(const ProbeFacts& f) {
  const bool has_status = f.stored_status.is_object() && f.stored_status.contains("conditions");
  const ProbeBearing way =
      std::visit([&](const auto& path) { return BearingOf(path, f); }, f.failure.path);
  ProbeStep s;
  if (!f.outcome) {
    if (!f.staged) {
      if (auto left = TrustedStoredProbe(f)) {
        s.action = ProbeAction::kTrustStored;
        s.then = ProbeThen::kRequeue;
        s.after = std::min(*left, f.next_probe);
        return s;
      }
      if (way.wait_for_load) {
        s.action = ProbeAction::kWaitForLoad;
        s.report = has_status;
        s.reason = std::string(reasons::kConfigNotReloaded);
        s.message = "NatsServer " + f.failure.server +
                    " has not loaded the config that carries user " + f.failure.user +
                    " yet (its reloader reports an earlier one)";
        s.then = ProbeThen::kRequeue;
        s.after = *way.wait_for_load;
        return s;
      }
    }
    s.action = ProbeAction::kSubmit;
    s.then = ProbeThen::kAwait;
    return s;
  }
  // Probe again once `d` has passed since the outcome.
  auto again_after = [&](milliseconds d) {
    if (f.outcome->age >= d) {
      s.then = ProbeThen::kProbeAgain;
    } else {
      s.then = ProbeThen::kRequeue;
      s.after = d - f.outcome->age + milliseconds(1);
    }
  };
  if (f.outcome->primary_ok) {
    if (f.staged) {
      s.action = ProbeAction::kConfirm;
      s.then = ProbeThen::kRequeue;
      s.after = f.next_probe;
    } else {
      s.action = ProbeAction::kPassed;
      again_after(f.next_probe);
    }
    return s;
  }
  if (f.staged && f.outcome->fallback_ok) {
    s.action = ProbeAction::kRotationStaged;
    s.reason = std::string(reasons::kRotationStaged);
    s.message = "probe passed with the env Secret's credentials; the rotation switches them once " +
                way.staged_waits_for;
    again_after(f.failure.reload_retry);
    return s;
  }
  ProbeFailureFacts failure = f.failure;
  failure.code = f.outcome->code;
  failure.probe_message = f.outcome->message;
  failure.server_connection_limit = f.outcome->server_connection_limit;
  failure.user_waiting = f.outcome->user_waiting;
  failure.has_status = has_status;
  auto decided = DecideProbeFailure(failure);
  s.action = ProbeAction::kFailed;
  s.report = decided.report;
  s.reason = std::string(decided.reason);
  s.message = std::move(decided.message);
  again_after(std::min(decided.retry, f.next_probe));
  return s;
}

namespace {

FinalizeStep Skipped(const FinalizeFacts& f, std::string_view reason, const std::string& why) {
  FinalizeStep s;
  s.step = Finalize::kCleanUp;
  s.warning = true;
  s.reason = std::string(reason);
  s.message = "finalizer removed without removing the NATS user from NatsServer " + f.server +
              " (" + why + ")";
  return s;
}

FinalizeStep RemovedThrough(const RemovalFromFile& file, const FinalizeFacts& f) {
  if (!file.config_exists) {
    return Skipped(f, reasons::kConfigTargetMissing, "its config Secret is gone");
  }
  FinalizeStep s;
  if (file.users_rendered) {
    if (file.deleting_for && *file.deleting_for < file.cleanup_timeout) {
      s.step = Finalize::kWait;
      s.recheck = milliseconds(500);
      return s;
    }
    return Skipped(f, reasons::kCleanupTimedOut, "no render without it in time");
  }
  s.step = Finalize::kCleanUp;
  s.reason = std::string(reasons::kUserRemoved);
  s.message = "NATS user removed from NatsServer " + f.server;
  return s;
}

FinalizeStep RemovedThrough(const RemovalByAuthorizers&, const FinalizeFacts& f) {
  FinalizeStep s;
  s.step = Finalize::kCleanUp;
  s.reason = std::string(reasons::kUserRemoved);
  s.message = "NATS user removed from NatsServer " + f.server +
              ": its authorizer refuses it once the credentials Secret is gone and closes its "
              "connections";
  return s;
}

}  // namespace

FinalizeStep DecideFinalize(const FinalizeFacts& f) {
  FinalizeStep s;
  if (!f.has_finalizer) return s;
  s.step = Finalize::kCleanUp;
  if (f.server.empty()) return s;
  if (!f.server_exists) return Skipped(f, reasons::kServerGone, "the NatsServer is gone");
  return std::visit([&](const auto& removal) { return RemovedThrough(removal, f); }, f.removal);
}

}  // namespace switchboard::operator_logic
