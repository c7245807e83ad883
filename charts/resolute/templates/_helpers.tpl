{{/*
Names. The master's objects keep the names the seeds' kubectl commands use
(determined-master-service-<release>, determined-master-deployment-<release>,
pods labelled app=determined-master-<release>).
*/}}
{{- define "resolute.masterName" -}}determined-master-{{ .Release.Name }}{{- end -}}
{{- define "resolute.masterDeployment" -}}determined-master-deployment-{{ .Release.Name }}{{- end -}}
{{- define "resolute.masterService" -}}determined-master-service-{{ .Release.Name }}{{- end -}}
{{- define "resolute.masterConfig" -}}determined-master-config-{{ .Release.Name }}{{- end -}}
{{- define "resolute.serviceAccount" -}}determined-master-{{ .Release.Name }}{{- end -}}
{{- define "resolute.ingress" -}}determined-master-ingress-{{ .Release.Name }}{{- end -}}
{{- define "resolute.dbName" -}}determined-db-{{ .Release.Name }}{{- end -}}
{{- define "resolute.dbService" -}}determined-db-service-{{ .Release.Name }}{{- end -}}
{{- define "resolute.dbDeployment" -}}determined-db-deployment-{{ .Release.Name }}{{- end -}}
{{- define "resolute.dbClaim" -}}determined-db-pvc-{{ .Release.Name }}{{- end -}}
{{- /* Cluster-scoped objects carry the namespace too: two releases of the same name in different namespaces must not collide. */ -}}
{{- define "resolute.clusterName" -}}resolute-{{ .Release.Namespace }}-{{ .Release.Name }}{{- end -}}
{{- define "resolute.schedulerName" -}}coscheduler{{- end -}}
{{- define "resolute.scheduler" -}}resolute-coscheduler-{{ .Release.Name }}{{- end -}}

{{- define "resolute.image" -}}
{{- printf "%s/resolute:%s" (trimSuffix "/" .Values.imageRegistry) .Chart.AppVersion -}}
{{- end -}}

{{- define "resolute.labels" -}}
app.kubernetes.io/name: resolute
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "resolute.tlsDir" -}}/etc/resolute/tls{{- end -}}

{{/*
The port of the task origin: tasksPort, or masterPort + 1.
*/}}
{{- define "resolute.tasksPort" -}}
{{- if .Values.tasksPort -}}{{ int .Values.tasksPort }}{{- else -}}{{ add1 (int .Values.masterPort) }}{{- end -}}
{{- end -}}

{{/*
external_url and tasks_url of master.yaml, as a dict: from the Ingress's
host names when it is enabled (a tasksHost *.tasks.example.com gives every
task a host of its own, tasks_url https://{task}.tasks.example.com);
tasksUrl wins over the Ingress's.
*/}}
{{- define "resolute.urls" -}}
{{- $v := .Values -}}
{{- $i := $v.ingress | default dict -}}
{{- $out := dict -}}
{{- if $i.enabled -}}
{{- if or (not $i.host) (not $i.tasksHost) -}}
{{- fail "ingress.enabled needs ingress.host (the master's host name) and ingress.tasksHost (the task origin's, another name)" -}}
{{- end -}}
{{- if eq (lower $i.host) (lower $i.tasksHost) -}}
{{- fail "ingress.tasksHost must be another host name than ingress.host: cookies are per host, so the task origin needs a name of its own" -}}
{{- end -}}
{{- $wild := hasPrefix "*." $i.tasksHost -}}
{{- if contains "*" (ternary (trimPrefix "*." $i.tasksHost) $i.tasksHost $wild) -}}
{{- fail "ingress.tasksHost may have a wildcard only as its first label, *.tasks.example.com, which gives every task a host of its own" -}}
{{- end -}}
{{- if and $wild (hasSuffix (lower (trimPrefix "*" $i.tasksHost)) (lower $i.host)) -}}
{{- fail "ingress.host must not be one of the tasks' hosts that ingress.tasksHost's wildcard covers" -}}
{{- end -}}
{{- /* https when the Ingress terminates TLS, or passes it through to a master that serves it */ -}}
{{- $scheme := ternary "https" "http" (or (not (empty $i.tlsSecret)) (not (empty $v.tlsSecret))) -}}
{{- $_ := set $out "external_url" (printf "%s://%s" $scheme $i.host) -}}
{{- $_ := set $out "tasks_url" (printf "%s://%s" $scheme (ternary (printf "{task}.%s" (trimPrefix "*." $i.tasksHost)) $i.tasksHost $wild)) -}}
{{- end -}}
{{- if $v.tasksUrl }}{{ $_ := set $out "tasks_url" (trimSuffix "/" $v.tasksUrl) }}{{ end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
The namespaces tasks run in: the release namespace and every pool's.
*/}}
{{- define "resolute.taskNamespaces" -}}
{{- $out := list .Release.Namespace -}}
{{- range .Values.resourcePools -}}
{{- if .kubernetes_namespace -}}{{- $out = append $out .kubernetes_namespace -}}{{- end -}}
{{- end -}}
{{- range .Values.workspaceNamespaces -}}{{- $out = append $out . -}}{{- end -}}
{{- uniq $out | join "," -}}
{{- end -}}

{{/*
checkpoint_storage of master.yaml, from the camelCase checkpointStorage.
*/}}
{{- define "resolute.checkpointStorage" -}}
{{- $s := .Values.checkpointStorage -}}
{{- $out := dict "type" $s.type "save_experiment_best" (int $s.saveExperimentBest) "save_trial_best" (int $s.saveTrialBest) "save_trial_latest" (int $s.saveTrialLatest) -}}
{{- if eq $s.type "shared_fs" -}}
{{- $_ := set $out "host_path" (required "checkpointStorage.hostPath is required with type shared_fs" $s.hostPath) -}}
{{- if $s.storagePath }}{{ $_ := set $out "storage_path" $s.storagePath }}{{ end -}}
{{- else if eq $s.type "directory" -}}
{{- $_ := set $out "container_path" (required "checkpointStorage.containerPath is required with type directory" $s.containerPath) -}}
{{- else if eq $s.type "s3" -}}
{{- $_ := set $out "bucket" (required "checkpointStorage.bucket is required with type s3" $s.bucket) -}}
{{- if $s.accessKey }}{{ $_ := set $out "access_key" $s.accessKey }}{{ end -}}
{{- if $s.secretKey }}{{ $_ := set $out "secret_key" $s.secretKey }}{{ end -}}
{{- if $s.endpointUrl }}{{ $_ := set $out "endpoint_url" $s.endpointUrl }}{{ end -}}
{{- if $s.prefix }}{{ $_ := set $out "prefix" $s.prefix }}{{ end -}}
{{- else if eq $s.type "gcs" -}}
{{- $_ := set $out "bucket" (required "checkpointStorage.bucket is required with type gcs" $s.bucket) -}}
{{- if $s.prefix }}{{ $_ := set $out "prefix" $s.prefix }}{{ end -}}
{{- else if eq $s.type "azure" -}}
{{- $_ := set $out "container" (required "checkpointStorage.container is required with type azure" $s.container) -}}
{{- if and $s.connection_string $s.account_url -}}
{{- fail "checkpointStorage: give connection_string or account_url (with an optional credential), not both" -}}
{{- else if $s.connection_string -}}
{{- $_ := set $out "connection_string" $s.connection_string -}}
{{- else if $s.account_url -}}
{{- $_ := set $out "account_url" $s.account_url -}}
{{- if $s.credential }}{{ $_ := set $out "credential" $s.credential }}{{ end -}}
{{- else -}}
{{- fail "checkpointStorage: type azure needs connection_string, or account_url (with an optional credential)" -}}
{{- end -}}
{{- else -}}
{{- fail (printf "checkpointStorage.type must be shared_fs, directory, s3, gcs or azure (got %q)" (toString $s.type)) -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
task_container_defaults of master.yaml, from taskContainerDefaults.
*/}}
{{- define "resolute.taskContainerDefaults" -}}
{{- $t := .Values.taskContainerDefaults | default dict -}}
{{- $out := dict -}}
{{- if $t.cpuPodSpec }}{{ $_ := set $out "cpu_pod_spec" $t.cpuPodSpec }}{{ end -}}
{{- if $t.gpuPodSpec }}{{ $_ := set $out "gpu_pod_spec" $t.gpuPodSpec }}{{ end -}}
{{- if $t.checkpointGcPodSpec }}{{ $_ := set $out "checkpoint_gc_pod_spec" $t.checkpointGcPodSpec }}{{ end -}}
{{- if $t.cpuImage }}{{ $_ := set $out "cpu_image" $t.cpuImage }}{{ end -}}
{{- if $t.gpuImage }}{{ $_ := set $out "gpu_image" $t.gpuImage }}{{ end -}}
{{- toYaml $out -}}
{{- end -}}

{{/*
master.yaml: the keys of masterconf (README) and of the Kubernetes resource
manager (k8s/doc.go). It holds passwords and storage keys, so it is only
ever written into a Secret.
*/}}
{{- define "resolute.masterYAML" -}}
{{- $v := .Values -}}
{{- if or (kindIs "invalid" $v.maxSlotsPerPod) (lt (int $v.maxSlotsPerPod) 1) -}}
{{- fail "maxSlotsPerPod is required (1 or more): set it to the number of GPUs of each GPU node (or CPU slots per pod with slotType: cpu), e.g. --set maxSlotsPerPod=8" -}}
{{- end -}}
{{- if not (has $v.slotType (list "gpu" "cpu")) -}}
{{- fail (printf "slotType must be gpu or cpu (got %q)" (toString $v.slotType)) -}}
{{- end -}}
{{- if not (has $v.defaultScheduler (list "" "coscheduler" "preemption")) -}}
{{- fail (printf "defaultScheduler must be empty, coscheduler or preemption (got %q)" (toString $v.defaultScheduler)) -}}
{{- end -}}
{{- $db := dict "name" $v.db.name "user" $v.db.user "password" (toString $v.db.password) "port" (int $v.db.port) -}}
{{- if $v.db.hostAddress -}}
{{- $_ := set $db "host" $v.db.hostAddress -}}
{{- else -}}
{{- $_ := set $db "host" (printf "%s.%s.svc" (include "resolute.dbService" .) .Release.Namespace) -}}
{{- end -}}
{{- if $v.db.sslMode }}{{ $_ := set $db "ssl_mode" $v.db.sslMode }}{{ end -}}
{{- $tasksPort := int (include "resolute.tasksPort" .) -}}
{{- if eq $tasksPort (int $v.masterPort) -}}
{{- fail (printf "tasksPort must differ from masterPort (both %d): the task origin is a listener of its own" $tasksPort) -}}
{{- end -}}
{{- $cfg := dict "port" (int $v.masterPort) "tasks_port" $tasksPort "data_dir" "/var/lib/resolute" "db" $db "log" (dict "level" $v.logLevel) -}}
{{- $cfg = merge $cfg (include "resolute.urls" . | fromYaml) -}}
{{- $sec := dict -}}
{{- if $v.initialUserPassword }}{{ $_ := set $sec "initial_user_password" (toString $v.initialUserPassword) }}{{ end -}}
{{- if $v.defaultPassword }}{{ $_ := set $sec "default_password" (toString $v.defaultPassword) }}{{ end -}}
{{- if $v.minPasswordLength }}{{ $_ := set $sec "min_password_length" (int $v.minPasswordLength) }}{{ end -}}
{{- if $v.trustedProxies }}{{ $_ := set $sec "trusted_proxies" $v.trustedProxies }}{{ end -}}
{{- if $sec }}{{ $_ := set $cfg "security" $sec }}{{ end -}}
{{- $scheme := "http" -}}
{{- if $v.tlsSecret -}}
{{- $scheme = "https" -}}
{{- $_ := set $cfg "tls" (dict "cert" (printf "%s/tls.crt" (include "resolute.tlsDir" .)) "key" (printf "%s/tls.key" (include "resolute.tlsDir" .))) -}}
{{- end -}}
{{- $_ := set $cfg "checkpoint_storage" (include "resolute.checkpointStorage" . | fromYaml) -}}
{{- $rm := dict "type" "kubernetes" "namespace" .Release.Namespace "max_slots_per_pod" (int $v.maxSlotsPerPod) "slot_type" $v.slotType -}}
{{- if $v.defaultScheduler }}{{ $_ := set $rm "default_scheduler" $v.defaultScheduler }}{{ end -}}
{{- if eq $v.slotType "cpu" -}}
{{- $_ := set $rm "slot_resource_requests" (dict "cpu" (required "slotResourceRequests.cpu is required with slotType: cpu" $v.slotResourceRequests.cpu)) -}}
{{- end -}}
{{- $host := $v.determinedMasterHost | default (printf "%s.%s.svc" (include "resolute.masterService" .) .Release.Namespace) -}}
{{- $mport := int ($v.determinedMasterPort | default $v.masterPort) -}}
{{- $mscheme := $v.determinedMasterScheme | default $scheme -}}
{{- $_ := set $rm "determined_master_host" $host -}}
{{- $_ := set $rm "determined_master_port" $mport -}}
{{- $_ := set $rm "determined_master_scheme" $mscheme -}}
{{- if $v.defaultAuxResourcePool }}{{ $_ := set $rm "default_aux_resource_pool" $v.defaultAuxResourcePool }}{{ end -}}
{{- if $v.defaultComputeResourcePool }}{{ $_ := set $rm "default_compute_resource_pool" $v.defaultComputeResourcePool }}{{ end -}}
{{- $_ := set $cfg "resource_manager" $rm -}}
{{- if $v.resourcePools }}{{ $_ := set $cfg "resource_pools" $v.resourcePools }}{{ end -}}
{{- $tcd := include "resolute.taskContainerDefaults" . | fromYaml -}}
{{- if $tcd }}{{ $_ := set $cfg "task_container_defaults" $tcd }}{{ end -}}
{{- if not (kindIs "invalid" $v.notebookTimeout) }}{{ $_ := set $cfg "notebook_timeout" (int $v.notebookTimeout) }}{{ end -}}
{{- if not (kindIs "invalid" $v.tensorboardTimeout) }}{{ $_ := set $cfg "tensorboard_timeout" (int $v.tensorboardTimeout) }}{{ end -}}
{{- $obs := $v.observability | default dict -}}
{{- if $obs.enablePrometheus -}}
{{- $o := dict "enable_prometheus" true -}}
{{- if $obs.metricsToken }}{{ $_ := set $o "metrics_token" (toString $obs.metricsToken) }}{{ end -}}
{{- $_ := set $cfg "observability" $o -}}
{{- else if $obs.metricsToken -}}
{{- fail "observability.metricsToken needs observability.enablePrometheus: true" -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}
