{{/*
Names and labels shared by the chart's templates.
*/}}

{{/* The chart's name, or nameOverride. */}}
{{- define "ballast.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of every object's name: fullnameOverride, else the release name
when it contains the chart's name ("ballast" for `helm install ballast`),
else "<release>-<chart>". 50 characters, so that "-coordinator" still fits a
Service name (63).
*/}}
{{- define "ballast.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* "ballast-0.1.0": the chart label's value. */}}
{{- define "ballast.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The app.kubernetes.io labels of every object of the release. */}}
{{- define "ballast.labels" -}}
helm.sh/chart: {{ include "ballast.chart" . }}
{{ include "ballast.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: ballast
{{- end }}

{{/* The labels that select the release's objects (name and instance). */}}
{{- define "ballast.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ballast.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The labels that select the operator's pods. */}}
{{- define "ballast.operatorSelectorLabels" -}}
{{ include "ballast.selectorLabels" . }}
app.kubernetes.io/component: operator
{{- end }}

{{/* The operator's ServiceAccount. */}}
{{- define "ballast.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ballast.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name: the name of an existing ServiceAccount, since serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
An image name under imageRegistry: (dict "name" NAME "root" $). NAME is used
as is when it starts with a registry, as a container runtime reads a name: a
first path component with a dot or a port, or "localhost"
(registry.lan:5000/ballast, docker.io/me/ballast); otherwise, and for a bare
name, it goes under imageRegistry (ballast -> ghcr.io/ballast-io/ballast).
An empty imageRegistry leaves every name as it is.
*/}}
{{- define "ballast.imageName" -}}
{{- $name := .name }}
{{- $registry := .root.Values.imageRegistry | default "" }}
{{- $first := index (splitList "/" $name) 0 }}
{{- $qualified := and (contains "/" $name) (or (contains "." $first) (contains ":" $first) (eq $first "localhost")) }}
{{- if or $qualified (not $registry) }}
{{- $name }}
{{- else }}
{{- printf "%s/%s" $registry $name }}
{{- end }}
{{- end }}

{{/* The ballast image with its tag (the chart's appVersion by default). */}}
{{- define "ballast.image" -}}
{{- $name := include "ballast.imageName" (dict "name" .Values.image.repository "root" .) }}
{{- printf "%s:%s" $name (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The default worker image with its tag. */}}
{{- define "ballast.workerImage" -}}
{{- $name := include "ballast.imageName" (dict "name" .Values.worker.image.repository "root" .) }}
{{- printf "%s:%s" $name (default .Chart.AppVersion .Values.worker.image.tag) }}
{{- end }}

{{/*
The worker image of one architecture, (dict "arch" ARCH "root" $):
worker.perArchitecture.<arch>.image under imageRegistry as above, or ""
when it is not set (the operator then gives that architecture --worker-image).
*/}}
{{- define "ballast.archWorkerImage" -}}
{{- $settings := get .root.Values.worker.perArchitecture .arch | default dict }}
{{- with $settings.image }}
{{- include "ballast.imageName" (dict "name" . "root" $.root) }}
{{- end }}
{{- end }}

{{/* The coordinator Service's name. */}}
{{- define "ballast.coordinatorService" -}}
{{- printf "%s-coordinator" (include "ballast.fullname" .) }}
{{- end }}

{{/* The URL worker pods reach the coordinator at. */}}
{{- define "ballast.coordinatorUrl" -}}
{{- if .Values.coordinator.url }}
{{- .Values.coordinator.url }}
{{- else }}
{{- printf "http://%s.%s.svc:%d" (include "ballast.coordinatorService" .) .Release.Namespace (int .Values.coordinator.port) }}
{{- end }}
{{- end }}

{{/*
--worker-resources-for's value for one architecture's resources:
"requests.cpu=100m,requests.memory=32Mi,limits.memory=256Mi" (sorted keys).
*/}}
{{- define "ballast.flatResources" -}}
{{- $parts := list }}
{{- range $kind := list "requests" "limits" }}
{{- $list := get $ $kind | default dict }}
{{- range $resource := keys $list | sortAlpha }}
{{- $parts = append $parts (printf "%s.%s=%v" $kind $resource (get $list $resource)) }}
{{- end }}
{{- end }}
{{- join "," $parts }}
{{- end }}

{{/* Fails the render when more than one replica would run without leader
election: each would reconcile every job and serve its own coordinator. */}}
{{- define "ballast.checkReplicas" -}}
{{- if and (gt (int .Values.operator.replicas) 1) (not .Values.operator.leaderElection.enabled) }}
{{- fail (printf "operator.replicas is %d but operator.leaderElection.enabled is false: more than one replica needs leader election; set operator.replicas=1, or operator.leaderElection.enabled=true" (int .Values.operator.replicas)) }}
{{- end }}
{{- end }}

{{/* Fails the render when two of the pod's ports are the same. */}}
{{- define "ballast.checkPorts" -}}
{{- $ports := list (int .Values.coordinator.port) (int .Values.health.port) (int .Values.metrics.port) }}
{{- if ne (len ($ports | uniq)) 3 }}
{{- fail (printf "coordinator.port (%d), health.port (%d) and metrics.port (%d) must differ" (int .Values.coordinator.port) (int .Values.health.port) (int .Values.metrics.port)) }}
{{- end }}
{{- end }}
