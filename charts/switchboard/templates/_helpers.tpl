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
