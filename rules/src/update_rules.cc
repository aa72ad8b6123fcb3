// UPDATE-only warnings: changes that are allowed but that running engines
// notice. Both objects are read through views, so an omitted field and its
// default compare equal.
#include "rules.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/views.h"

namespace switchboard::rules::internal {

void CheckBackendUpdate(const nlohmann::json& object, const nlohmann::json& old, Sink& sink) {
  api::BackendView now(object), before(old);
  if (now.kind() != before.kind()) {
    sink.Warn("update-kind", "spec.kind",
              "changes from " + Quote(before.kind()) + " to " + Quote(now.kind()) +
                  "; the env Secret is rewritten for the new kind and every engine must restart "
                  "to switch pub/sub; in-flight messages are lost");
    return;
  }
  if (now.kind() == api::kBackendNats) {
    if (now.subject_prefix() != before.subject_prefix()) {
      sink.Warn("update-prefix", "spec.nats.subjectPrefix",
                "changes from " + Quote(before.subject_prefix()) + " to " +
                    Quote(now.subject_prefix()) +
                    "; engines keep the old prefix until they restart: restart all of them "
                    "together (old and new pods do not hear each other)");
    }
    if (now.server() != before.server()) {
      sink.Warn("update-server", "spec.nats.serverRef",
                "moves from NatsServer " + before.server().ToString() + " to " +
                    now.server().ToString() + "; engines must restart with the new env Secret");
    }
    if (now.username() != before.username()) {
      sink.Warn("update-username", "spec.nats.credentials.username",
                "changes from " + Quote(before.username()) + " to " + Quote(now.username()) +
                    "; the old user is removed and running engines are disconnected until they "
                    "restart (use the rotate-password annotation for a staged change)");
    }
  }
  if (now.env_secret_name() != before.env_secret_name()) {
    sink.Warn("update-output", "spec.output.secretName",
              "changes from " + Quote(before.env_secret_name()) + " to " +
                  Quote(now.env_secret_name()) +
                  "; update the engines' envFrom to the new Secret and restart them");
  }
}

void CheckServerUpdate(const nlohmann::json& object, const nlohmann::json& old, Sink& sink) {
  api::NatsServerView now(object), before(old);
  if (now.isolation() != before.isolation()) {
    // In AuthCallout mode the two isolations are two static configs (NATS
    // operator mode for Accounts), which nats-server cannot reload.
    const bool restart = now.auth_callout() && before.auth_callout();
    sink.Warn("update-isolation", "spec.isolation",
              "changes from " + before.isolation() + " to " + now.isolation() +
                  (restart ? "; the static config changes (Accounts runs NATS in operator mode), "
                             "which nats-server cannot reload: restart the NATS servers one at a "
                             "time on the new config; engines reconnect with the credentials "
                             "they have: follow \"Switching isolation\" in docs/auth-callout.md"
                           : "; every installation's user is re-rendered and connected engines "
                             "reconnect"));
  }
  if (now.provisioning_mode() != before.provisioning_mode()) {
    sink.Warn("update-provisioning", "spec.provisioning.mode",
              "changes from " + before.provisioning_mode() + " to " + now.provisioning_mode() +
                  "; the NATS servers need a rolling restart to load the new static config "
                  "(auth_callout is not reloadable): follow \"Switching modes\" in docs/api.md");
  } else if (now.auth_callout() && (now.callout_account() != before.callout_account() ||
                                    now.callout_secret_name() != before.callout_secret_name())) {
    sink.Warn("update-provisioning", "spec.provisioning.authCallout",
              "the account or the callout keys Secret changes; the static config changes with "
              "it and auth_callout is not reloadable: the NATS servers need a rolling restart, "
              "and engines reconnect");
  }
  if (now.config_secret_name() != before.config_secret_name() ||
      now.config_key() != before.config_key()) {
    sink.Warn("update-config", "spec.config",
              "the rendered config moves to another Secret or key; the NATS pods must include "
              "the new one or no installation can log in");
  }
  if (now.url() != before.url()) {
    sink.Warn("update-url", "spec.url",
              "the seed list changes; engines read it at start: restart them to use the new "
              "seeds");
  }
}

}  // namespace switchboard::rules::internal
