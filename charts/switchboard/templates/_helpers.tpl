{{/* Chart name, truncated to the 63 characters a label allows. */}}
{{- define "switchboard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Release-scoped base name for every object. */}}
{{- define "switchboard.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "switchboard.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "switchboard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: switchboard
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels for one component (operator, webhook, nats). */}}
{{- define "switchboard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "switchboard.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "switchboard.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "switchboard.operatorServiceAccount" -}}
{{- if .Values.operator.serviceAccount.create -}}
{{- default (printf "%s-operator" (include "switchboard.fullname" .)) .Values.operator.serviceAccount.name -}}
{{- else -}}
{{- required "operator.serviceAccount.name is required when operator.serviceAccount.create is false" .Values.operator.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "switchboard.webhookServiceAccount" -}}
{{- if .Values.webhook.serviceAccount.create -}}
{{- default (printf "%s-webhook" (include "switchboard.fullname" .)) .Values.webhook.serviceAccount.name -}}
{{- else -}}
{{- required "webhook.serviceAccount.name is required when webhook.serviceAccount.create is false" .Values.webhook.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "switchboard.webhookService" -}}
{{- printf "%s-webhook" (include "switchboard.fullname" .) -}}
{{- end -}}

{{- define "switchboard.webhookCertSecret" -}}
{{- printf "%s-webhook-tls" (include "switchboard.fullname" .) -}}
{{- end -}}

{{- define "switchboard.natsName" -}}
{{- printf "%s-nats" (include "switchboard.fullname" .) -}}
{{- end -}}

{{/* The Secret the operator renders the NATS include file into. */}}
{{- define "switchboard.natsConfigSecret" -}}
{{- printf "%s-switchboard" (include "switchboard.natsName" .) -}}
{{- end -}}

{{/*
The operator's rules on namespaced core objects: a ClusterRole's when it
watches every namespace, one Role per watched namespace otherwise. Exactly
the calls it makes (operator/controller/src/secret_io.cc, the Secrets
informer, kube/src/event_recorder.cc): Secrets are written by merge patch,
never replaced (no update), and Events are core v1 only.
*/}}
{{- define "switchboard.operatorNamespacedRules" -}}
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]
{{- end -}}

{{/* "true" when the chart's NATS runs in AuthCallout mode, else empty. */}}
{{- define "switchboard.natsCallout" -}}
{{- if and .Values.nats.enabled (eq .Values.nats.provisioning.mode "AuthCallout") -}}true{{- end -}}
{{- end -}}

{{/* "true" when the authorizer Deployment is rendered, else empty. */}}
{{- define "switchboard.authorizerEnabled" -}}
{{- if or .Values.authorizer.enabled (include "switchboard.natsCallout" .) -}}true{{- end -}}
{{- end -}}

{{- define "switchboard.authorizerServiceAccount" -}}
{{- if .Values.authorizer.serviceAccount.create -}}
{{- default (printf "%s-authorizer" (include "switchboard.fullname" .)) .Values.authorizer.serviceAccount.name -}}
{{- else -}}
{{- required "authorizer.serviceAccount.name is required when authorizer.serviceAccount.create is false" .Values.authorizer.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
The authorizer's rule on namespaced core objects, like the operator's a
ClusterRole's when every namespace is watched and one Role per watched
namespace otherwise: it only reads Secrets (the backends' credentials
Secrets it checks passwords against, each NatsServer's callout Secret with
the issuer key and its own NATS password). It writes nothing.
*/}}
{{- define "switchboard.authorizerNamespacedRules" -}}
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list, watch]
{{- end -}}
