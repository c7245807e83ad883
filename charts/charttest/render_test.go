package charttest

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/masterconf"
)

// chartCase is one point of the values matrix.
type chartCase struct {
	name   string
	values string
	// secrets are strings of the values that must stay out of ConfigMaps.
	secrets []string
	// poolNamespaces are the pools' namespaces, which get a Role each.
	poolNamespaces []string
	check          func(t *testing.T, r *rendered)
}

// matrix is the values the chart is rendered with; the cluster tests apply
// the same objects to an API server. Namespaces named "POOL-A"/"POOL-B" are
// replaced by real ones there.
func matrix() []chartCase {
	return []chartCase{
		{name: "defaults", values: "maxSlotsPerPod: 8\n", secrets: []string{"postgres"}, check: checkDefaults},
		{name: "external-db", values: `
maxSlotsPerPod: 8
db:
  hostAddress: db.example.com
  port: 6543
  name: mlde
  user: resolute
  password: "ext-db-pa55: 'quoted' \"too\""
  sslMode: require
initialUserPassword: first-login-pa55
minPasswordLength: 12
trustedProxies: [10.0.0.0/8, 192.0.2.7]
`, secrets: []string{"ext-db-pa55", "first-login-pa55"}, check: checkExternalDB},
		{name: "ingress", values: `
maxSlotsPerPod: 8
useNodePortForMaster: true
tasksPort: 9000
ingress:
  enabled: true
  className: nginx
  host: ml.example.com
  tasksHost: tasks.ml.example.com
  tlsSecret: ml-tls
  annotations:
    nginx.ingress.kubernetes.io/proxy-read-timeout: "3600"
`, check: checkIngress},
		{name: "ingress-passthrough", values: `
maxSlotsPerPod: 8
useNodePortForMaster: true
tlsSecret: resolute-tls
ingress:
  enabled: true
  host: ml.example.com
  tasksHost: tasks.ml.example.com
  annotations:
    nginx.ingress.kubernetes.io/ssl-passthrough: "true"
`, check: func(t *testing.T, r *rendered) {
			// TLS goes through the Ingress to the master, which serves it
			// on both ports.
			if origin, _ := r.Config.TaskOrigin(); r.Config.URL() != "https://ml.example.com" || origin != "https://tasks.ml.example.com" {
				t.Errorf("the master at %s, the task origin at %s, want both https", r.Config.URL(), origin)
			}
			if ing := get[*networkingv1.Ingress](t, r, "Ingress", "determined-master-ingress-"+r.Release); len(ing.Spec.TLS) != 0 {
				t.Errorf("the Ingress terminates TLS it should pass through: %+v", ing.Spec.TLS)
			}
		}},
		{name: "ingress-task-hosts", values: `
maxSlotsPerPod: 8
ingress:
  enabled: true
  host: ml.example.com
  tasksHost: "*.tasks.ml.example.com"
  tlsSecret: ml-tls
`, check: checkIngressTaskHosts},
		{name: "tasks-url", values: `
maxSlotsPerPod: 8
tasksUrl: https://notebooks.example.com/
`, check: func(t *testing.T, r *rendered) {
			if origin, warning := r.Config.TaskOrigin(); origin != "https://notebooks.example.com" || warning != "" {
				t.Errorf("the task origin %s (%s), want tasksUrl", origin, warning)
			}
			if len(r.find("Ingress")) != 0 {
				t.Error("an Ingress without ingress.enabled")
			}
		}},
		{name: "tasks-url-task-hosts", values: `
maxSlotsPerPod: 8
tasksUrl: https://{task}.notebooks.example.com/
`, check: func(t *testing.T, r *rendered) {
			if origin, warning := r.Config.TaskOrigin(); origin != "https://{task}.notebooks.example.com" || warning != "" ||
				origin.Origin("tensorboard-4") != "https://tensorboard-4.notebooks.example.com" {
				t.Errorf("the task origin %s (%s), want tasksUrl, a host per task", origin, warning)
			}
		}},
		{name: "nodeport-tls", values: `
maxSlotsPerPod: 8
useNodePortForMaster: true
tlsSecret: resolute-tls
masterPort: 8443
defaultPassword: old-style-pa55
`, secrets: []string{"old-style-pa55"}, check: checkNodePortTLS},
		{name: "cpu-slots", values: `
maxSlotsPerPod: 2
slotType: cpu
slotResourceRequests:
  cpu: 7.5
masterCpuLimit: "2"
masterMemLimit: 4Gi
taskContainerDefaults:
  cpuPodSpec:
    apiVersion: v1
    kind: Pod
    metadata:
      labels: {customLabel: cpu-label}
    spec:
      containers:
        - name: determined-container
          volumeMounts: [{name: example-volume, mountPath: /example-data}]
      volumes:
        - name: example-volume
          hostPath: {path: /data}
  checkpointGcPodSpec:
    apiVersion: v1
    kind: Pod
    spec:
      nodeSelector: {pool: cpu}
  cpuImage: python:3.12
notebookTimeout: 1800
tensorboardTimeout: 600
`, check: checkCPUSlots},
		{name: "s3", values: `
maxSlotsPerPod: 8
checkpointStorage:
  type: s3
  bucket: ckpts
  accessKey: AKIA-S3-ACCESS
  secretKey: s3-SECRET-key
  endpointUrl: http://minio.storage:9000
  prefix: team-a
  saveExperimentBest: 2
  saveTrialBest: 3
  saveTrialLatest: 4
`, secrets: []string{"AKIA-S3-ACCESS", "s3-SECRET-key"}, check: checkS3},
		{name: "gcs", values: `
maxSlotsPerPod: 8
checkpointStorage: {type: gcs, bucket: gcs-ckpts, prefix: runs}
`, check: func(t *testing.T, r *rendered) {
			wantStorage(t, r, map[string]any{"type": "gcs", "bucket": "gcs-ckpts", "prefix": "runs",
				"save_experiment_best": 0, "save_trial_best": 1, "save_trial_latest": 1})
		}},
		{name: "azure-connection-string", values: `
maxSlotsPerPod: 8
checkpointStorage: {type: azure, container: ckpts, connection_string: "DefaultEndpointsProtocol=https;AccountKey=AZ-SECRET"}
`, secrets: []string{"AZ-SECRET"}, check: func(t *testing.T, r *rendered) {
			wantStorage(t, r, map[string]any{"type": "azure", "container": "ckpts",
				"connection_string":    "DefaultEndpointsProtocol=https;AccountKey=AZ-SECRET",
				"save_experiment_best": 0, "save_trial_best": 1, "save_trial_latest": 1})
		}},
		{name: "azure-account-url", values: `
maxSlotsPerPod: 8
checkpointStorage: {type: azure, container: ckpts, account_url: "https://acct.blob.core.windows.net", credential: AZ-CRED}
`, secrets: []string{"AZ-CRED"}, check: func(t *testing.T, r *rendered) {
			wantStorage(t, r, map[string]any{"type": "azure", "container": "ckpts",
				"account_url": "https://acct.blob.core.windows.net", "credential": "AZ-CRED",
				"save_experiment_best": 0, "save_trial_best": 1, "save_trial_latest": 1})
		}},
		{name: "directory", values: `
maxSlotsPerPod: 8
checkpointStorage: {type: directory, containerPath: /mnt/checkpoints}
`, check: func(t *testing.T, r *rendered) {
			wantStorage(t, r, map[string]any{"type": "directory", "container_path": "/mnt/checkpoints",
				"save_experiment_best": 0, "save_trial_best": 1, "save_trial_latest": 1})
		}},
		{name: "coscheduler", values: "maxSlotsPerPod: 8\ndefaultScheduler: coscheduler\n", check: checkCoscheduler},
		{name: "preemption", values: "maxSlotsPerPod: 8\ndefaultScheduler: preemption\n", check: func(t *testing.T, r *rendered) {
			if got := r.Config.ResourceManager.DefaultScheduler; got != "preemption" {
				t.Errorf("default_scheduler = %q, want preemption", got)
			}
			if len(r.find("ConfigMap")) != 0 {
				t.Error("preemption deploys no coscheduler, yet a ConfigMap was rendered")
			}
		}},
		{name: "two-pools", values: `
maxSlotsPerPod: 4
resourcePools:
  - pool_name: prod_pool
    kubernetes_namespace: POOL-A
    task_container_defaults:
      gpu_pod_spec:
        apiVersion: v1
        kind: Pod
        spec:
          tolerations:
            - {key: pool_taint, operator: Equal, value: prod, effect: NoSchedule}
  - pool_name: dev_pool
    kubernetes_namespace: POOL-B
defaultComputeResourcePool: prod_pool
defaultAuxResourcePool: dev_pool
`, poolNamespaces: []string{"POOL-A", "POOL-B"}, check: checkTwoPools},
		{name: "shared-cluster-objects-elsewhere", values: "maxSlotsPerPod: 8\ncreateNonNamespacedObjects: false\nimageRegistry: registry.example.com/mirror/\nimagePullSecretName: regcred\n",
			check: func(t *testing.T, r *rendered) {
				if pcs := r.find("PriorityClass"); len(pcs) != 0 {
					t.Errorf("createNonNamespacedObjects: false rendered %d PriorityClasses", len(pcs))
				}
				if len(r.find("ClusterRole")) != 1 {
					t.Error("the release's own ClusterRole must be rendered anyway")
				}
				spec := masterDeployment(t, r).Spec.Template.Spec
				if img := spec.Containers[0].Image; img != "registry.example.com/mirror/resolute:"+appVersion(t) {
					t.Errorf("image = %q", img)
				}
				if !reflect.DeepEqual(spec.ImagePullSecrets, []corev1.LocalObjectReference{{Name: "regcred"}}) {
					t.Errorf("imagePullSecrets = %v", spec.ImagePullSecrets)
				}
			}},
	}
}

// withNamespaces replaces the pool namespace placeholders.
func (c chartCase) withNamespaces(names map[string]string) chartCase {
	for from, to := range names {
		c.values = strings.ReplaceAll(c.values, from, to)
		for i, ns := range c.poolNamespaces {
			if ns == from {
				c.poolNamespaces = slices.Clone(c.poolNamespaces)
				c.poolNamespaces[i] = to
			}
		}
	}
	return c
}

func TestChartMatrix(t *testing.T) {
	for _, c := range matrix() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c = c.withNamespaces(map[string]string{"POOL-A": "team-a", "POOL-B": "team-b"})
			r := template(t, "rel-"+c.name, "ns-"+c.name, c.values)
			checkCommon(t, r, c)
			c.check(t, r)
		})
	}
}

// checkCommon asserts what holds for every release.
func checkCommon(t *testing.T, r *rendered, c chartCase) {
	t.Helper()
	rel, ns := r.Release, r.Namespace
	taskNamespaces := append([]string{ns}, c.poolNamespaces...)

	for _, o := range r.Objects {
		var meta struct {
			Metadata struct{ Labels map[string]string }
		}
		_ = yaml.Unmarshal(o.Raw, &meta)
		if meta.Metadata.Labels["app.kubernetes.io/instance"] != rel {
			t.Errorf("%s %s lacks the label app.kubernetes.io/instance=%s", o.Kind, o.Name, rel)
		}
		switch o.Kind {
		case "PriorityClass", "ClusterRole", "ClusterRoleBinding":
			if o.Namespace != "" {
				t.Errorf("cluster-scoped %s %s has namespace %q", o.Kind, o.Name, o.Namespace)
			}
			if o.Kind != "PriorityClass" && !strings.Contains(o.Name, ns+"-"+rel) {
				t.Errorf("cluster-scoped %s %s does not carry the namespace and release in its name", o.Kind, o.Name)
			}
		case "Role", "RoleBinding":
			if !slices.Contains(taskNamespaces, o.Namespace) && !(o.Namespace == "kube-system" && strings.Contains(o.Name, "coscheduler")) {
				t.Errorf("%s %s is in namespace %q, not one tasks run in (%v)", o.Kind, o.Name, o.Namespace, taskNamespaces)
			}
		default:
			if o.Namespace != ns {
				t.Errorf("%s %s is in namespace %q, want the release namespace %q", o.Kind, o.Name, o.Namespace, ns)
			}
		}
	}

	// master.yaml: the Kubernetes resource manager in the release namespace.
	cfg := r.Config
	rm := cfg.ResourceManager
	if rm.Type != "kubernetes" || rm.Namespace != ns || rm.MaxSlotsPerPod < 1 {
		t.Errorf("resource_manager = %+v, want type kubernetes in %s with max_slots_per_pod", rm, ns)
	}
	if cfg.DataDir != "/var/lib/resolute" {
		t.Errorf("data_dir = %q", cfg.DataDir)
	}

	// The master's Deployment.
	d := masterDeployment(t, r)
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("master strategy = %q, want Recreate (one master at a time)", d.Spec.Strategy.Type)
	}
	pod := d.Spec.Template.Spec
	if !reflect.DeepEqual(d.Spec.Selector.MatchLabels, map[string]string{"app": "determined-master-" + rel}) ||
		d.Spec.Template.Labels["app"] != "determined-master-"+rel {
		t.Errorf("master selector %v / labels %v, want app=determined-master-%s", d.Spec.Selector.MatchLabels, d.Spec.Template.Labels, rel)
	}
	if pod.ServiceAccountName != "determined-master-"+rel {
		t.Errorf("serviceAccountName = %q", pod.ServiceAccountName)
	}
	get[*corev1.ServiceAccount](t, r, "ServiceAccount", pod.ServiceAccountName)
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Errorf("master pod security context %+v, want non-root", sc)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("master pod has %d containers", len(pod.Containers))
	}
	mc := pod.Containers[0]
	if mc.Image != "ghcr.io/resolute-ml/resolute:"+appVersion(t) && !strings.HasPrefix(mc.Image, "registry.example.com/") {
		t.Errorf("master image = %q", mc.Image)
	}
	if sc := mc.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("master container security context %+v", sc)
	}
	if !slices.Equal(mc.Command, []string{"/usr/local/bin/resolute", "--config", "/etc/resolute/master.yaml"}) {
		t.Errorf("master command = %q", mc.Command)
	}
	if len(mc.Ports) != 2 || int(mc.Ports[0].ContainerPort) != cfg.Port || mc.Ports[1].Name != "tasks" || int(mc.Ports[1].ContainerPort) != cfg.TaskPort() {
		t.Errorf("master ports %v, want %d and tasks %d (port and tasks_port of master.yaml)", mc.Ports, cfg.Port, cfg.TaskPort())
	}
	for name, p := range map[string]*corev1.Probe{"startup": mc.StartupProbe, "readiness": mc.ReadinessProbe, "liveness": mc.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/health" || p.HTTPGet.Port.String() != "http" {
			t.Errorf("%s probe %+v, want GET /health on the http port", name, p)
		}
	}
	cfgVol := volume(t, pod, "config")
	if cfgVol.Secret == nil || cfgVol.Secret.SecretName != "determined-master-config-"+rel {
		t.Errorf("config volume %+v, want the Secret determined-master-config-%s", cfgVol, rel)
	}
	if m := mount(t, mc, "config"); m.MountPath != "/etc/resolute/master.yaml" || !m.ReadOnly {
		t.Errorf("config mount %+v", m)
	}
	if d.Spec.Template.Annotations["checksum/config"] == "" {
		t.Error("the master's pod template carries no checksum of its config")
	}

	// The Service.
	svc := get[*corev1.Service](t, r, "Service", "determined-master-service-"+rel)
	if svc.Spec.Selector["app"] != "determined-master-"+rel || len(svc.Spec.Ports) != 2 || int(svc.Spec.Ports[0].Port) != cfg.Port ||
		svc.Spec.Ports[1].Name != "tasks" || int(svc.Spec.Ports[1].Port) != cfg.TaskPort() || svc.Spec.Ports[1].TargetPort.String() != "tasks" {
		t.Errorf("master Service %+v, want the master's port and the task origin's", svc.Spec)
	}
	if origin, _ := cfg.TaskOrigin(); string(origin) == cfg.URL() {
		t.Errorf("the task origin is the master's own: %s", origin)
	}

	// RBAC: least privilege.
	sa := "determined-master-" + rel
	for _, tns := range taskNamespaces {
		role := roleIn(t, r, "Role", "determined-master-"+rel, tns).(*rbacv1.Role)
		wantRules(t, "Role in "+tns, role.Rules, map[string][]string{
			"pods":       {"create", "delete", "deletecollection", "get", "list", "patch", "watch"},
			"pods/log":   {"get"},
			"pods/exec":  {"create", "get"},
			"configmaps": {"create", "delete", "deletecollection", "get", "list", "update", "watch"},
			"secrets":    {"create", "delete", "update"},
			"events":     {"get", "list", "watch"},
		})
		rb := roleIn(t, r, "RoleBinding", "determined-master-"+rel, tns).(*rbacv1.RoleBinding)
		if rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != role.Name || len(rb.Subjects) != 1 ||
			rb.Subjects[0].Name != sa || rb.Subjects[0].Namespace != ns {
			t.Errorf("RoleBinding in %s: %+v", tns, rb)
		}
	}
	cr := get[*rbacv1.ClusterRole](t, r, "ClusterRole", "resolute-"+ns+"-"+rel)
	wantRules(t, "ClusterRole", cr.Rules, map[string][]string{
		"nodes":           {"get", "list", "watch"},
		"pods":            {"get", "list", "watch"},
		"priorityclasses": {"create", "get", "list", "watch"},
	})
	crb := get[*rbacv1.ClusterRoleBinding](t, r, "ClusterRoleBinding", cr.Name)
	if crb.RoleRef.Name != cr.Name || len(crb.Subjects) != 1 || crb.Subjects[0].Name != sa || crb.Subjects[0].Namespace != ns {
		t.Errorf("ClusterRoleBinding %+v", crb)
	}

	// The PriorityClass of task pods.
	if pc, ok := r.lookup("PriorityClass", "determined-medium-priority"); ok {
		if v := pc.Obj.(*schedulingv1.PriorityClass).Value; v != 50 {
			t.Errorf("determined-medium-priority = %d, want 50", v)
		}
	} else if !strings.Contains(c.values, "createNonNamespacedObjects: false") {
		t.Error("no PriorityClass determined-medium-priority")
	}

	// Secrets stay out of ConfigMaps; the master's config is in a Secret.
	for _, o := range r.find("ConfigMap") {
		cm := o.Obj.(*corev1.ConfigMap)
		for k, v := range cm.Data {
			if k == "master.yaml" || strings.Contains(v, "password") {
				t.Errorf("ConfigMap %s holds %s, which has secrets", cm.Name, k)
			}
			for _, s := range append([]string{cfg.DB.Password}, c.secrets...) {
				if s != "" && strings.Contains(v, s) {
					t.Errorf("ConfigMap %s/%s holds the secret %q", cm.Name, k, s)
				}
			}
		}
	}
	for _, s := range c.secrets {
		if !strings.Contains(r.MasterYAML, s) {
			t.Errorf("master.yaml lacks %q", s)
		}
	}

	// The bundled database unless an external one is configured.
	dbObjects := 0
	for _, o := range r.Objects {
		if strings.HasPrefix(o.Name, "determined-db-") {
			dbObjects++
		}
	}
	if external := cfg.DB.Host != "determined-db-service-"+rel+"."+ns+".svc"; external && dbObjects != 0 {
		t.Errorf("db.hostAddress is set, yet %d database objects were rendered", dbObjects)
	} else if !external && dbObjects != 3 {
		t.Errorf("%d database objects rendered, want the Deployment, the claim and the Service", dbObjects)
	}
}

func checkDefaults(t *testing.T, r *rendered) {
	rel, ns := r.Release, r.Namespace
	kinds := map[string]int{}
	for _, o := range r.Objects {
		kinds[o.Kind]++
	}
	want := map[string]int{"Deployment": 2, "Secret": 1, "Service": 2, "PersistentVolumeClaim": 1, "ServiceAccount": 1,
		"Role": 1, "RoleBinding": 1, "ClusterRole": 1, "ClusterRoleBinding": 1, "PriorityClass": 2}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("rendered kinds %v, want %v", kinds, want)
	}
	svc := get[*corev1.Service](t, r, "Service", "determined-master-service-"+rel)
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Spec.Ports[0].Port != 8080 || svc.Spec.Ports[1].Port != 8081 {
		t.Errorf("master Service %s %+v, want LoadBalancer:8080 and 8081", svc.Spec.Type, svc.Spec.Ports)
	}
	cfg := r.Config
	// Without tasksUrl nor an Ingress, the master's default: another host
	// on tasks_port, reached through kubectl port-forward.
	if origin, warning := cfg.TaskOrigin(); cfg.TasksPort != 8081 || cfg.TasksURL != "" || cfg.ExternalURL != "" ||
		origin != "http://127.0.0.1:8081" || warning != "" {
		t.Errorf("tasks_port %d, tasks_url %q, external_url %q: the task origin %s (%s)", cfg.TasksPort, cfg.TasksURL, cfg.ExternalURL, origin, warning)
	}
	if cfg.Port != 8080 || cfg.TLS.Cert != "" || cfg.ResourceManager.SlotType != "gpu" || cfg.ResourceManager.MaxSlotsPerPod != 8 {
		t.Errorf("config: port %d, tls %+v, rm %+v", cfg.Port, cfg.TLS, cfg.ResourceManager)
	}
	if got := cfg.TaskMasterURL(); got != "http://determined-master-service-"+rel+"."+ns+".svc:8080" {
		t.Errorf("tasks reach the master at %q", got)
	}
	if cfg.DB != (masterconf.DB{Host: "determined-db-service-" + rel + "." + ns + ".svc", Port: 5432, Name: "resolute", User: "postgres", Password: "postgres", SSLMode: "prefer"}) {
		t.Errorf("db = %+v", cfg.DB)
	}
	if cfg.Security.InitialUserPassword != "" || cfg.Security.DefaultPassword != "" {
		t.Errorf("security = %+v, want no password", cfg.Security)
	}
	wantStorage(t, r, map[string]any{"type": "shared_fs", "host_path": "/tmp/checkpoints",
		"save_experiment_best": 0, "save_trial_best": 1, "save_trial_latest": 1})
	if _, ok := r.Master["task_container_defaults"]; ok {
		t.Error("task_container_defaults rendered with no pod specs")
	}
	if cfg.TensorboardTimeout != 300 || cfg.NotebookTimeout != 0 {
		t.Errorf("timeouts %d/%d", cfg.TensorboardTimeout, cfg.NotebookTimeout)
	}
	pod := masterDeployment(t, r).Spec.Template.Spec
	if hasVolume(pod, "tls") {
		t.Error("a TLS volume without tlsSecret")
	}
	if pod.ImagePullSecrets != nil {
		t.Errorf("imagePullSecrets %v without imagePullSecretName", pod.ImagePullSecrets)
	}
	if res := pod.Containers[0].Resources; res.Requests.Cpu().String() != "1" || res.Requests.Memory().String() != "2Gi" || res.Limits != nil {
		t.Errorf("master resources %+v", res)
	}

	// The bundled PostgreSQL.
	pvc := get[*corev1.PersistentVolumeClaim](t, r, "PersistentVolumeClaim", "determined-db-pvc-"+rel)
	if q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; q.String() != "30Gi" || pvc.Spec.StorageClassName != nil {
		t.Errorf("database claim %+v", pvc.Spec)
	}
	db := get[*appsv1.Deployment](t, r, "Deployment", "determined-db-deployment-"+rel)
	dbPod := db.Spec.Template.Spec
	if v := volume(t, dbPod, "data"); v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != pvc.Name {
		t.Errorf("database volume %+v", v)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range dbPod.Containers[0].Env {
		env[e.Name] = e
	}
	if ref := env["POSTGRES_PASSWORD"].ValueFrom; ref == nil || ref.SecretKeyRef == nil ||
		ref.SecretKeyRef.Name != "determined-master-config-"+rel || ref.SecretKeyRef.Key != "db-password" {
		t.Errorf("POSTGRES_PASSWORD = %+v, want it from the Secret", env["POSTGRES_PASSWORD"])
	}
	if env["POSTGRES_DB"].Value != "resolute" || env["POSTGRES_USER"].Value != "postgres" {
		t.Errorf("database env %v", env)
	}
	sec := get[*corev1.Secret](t, r, "Secret", "determined-master-config-"+rel)
	if sec.StringData["db-password"] != "postgres" {
		t.Errorf("db-password = %q", sec.StringData["db-password"])
	}
	if sc := dbPod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("database pod security context %+v", sc)
	}
	dbSvc := get[*corev1.Service](t, r, "Service", "determined-db-service-"+rel)
	if dbSvc.Spec.Type != corev1.ServiceTypeClusterIP || dbSvc.Spec.Ports[0].Port != 5432 ||
		dbSvc.Spec.Selector["app"] != db.Spec.Template.Labels["app"] {
		t.Errorf("database Service %+v", dbSvc.Spec)
	}
}

func checkExternalDB(t *testing.T, r *rendered) {
	db := r.Config.DB
	if db.Host != "db.example.com" || db.Port != 6543 || db.Name != "mlde" || db.User != "resolute" ||
		db.Password != `ext-db-pa55: 'quoted' "too"` || db.SSLMode != "require" {
		t.Errorf("db = %+v", db)
	}
	if len(r.find("PersistentVolumeClaim")) != 0 || len(r.find("Deployment")) != 1 || len(r.find("Service")) != 1 {
		t.Error("database objects rendered with db.hostAddress")
	}
	if r.Config.Security.InitialUserPassword != "first-login-pa55" || r.Config.InitialPassword() != "first-login-pa55" ||
		r.Config.Security.MinPasswordLength != 12 || strings.Join(r.Config.Security.TrustedProxies, ",") != "10.0.0.0/8,192.0.2.7" {
		t.Errorf("security = %+v", r.Config.Security)
	}
}

func checkNodePortTLS(t *testing.T, r *rendered) {
	rel, ns := r.Release, r.Namespace
	svc := get[*corev1.Service](t, r, "Service", "determined-master-service-"+rel)
	if svc.Spec.Type != corev1.ServiceTypeNodePort || svc.Spec.Ports[0].Port != 8443 || svc.Spec.Ports[0].Name != "https" ||
		svc.Spec.Ports[1].Port != 8444 {
		t.Errorf("master Service %s %+v, want NodePort https:8443 and the task origin on 8444", svc.Spec.Type, svc.Spec.Ports)
	}
	if origin, _ := r.Config.TaskOrigin(); origin != "https://127.0.0.1:8444" {
		t.Errorf("the task origin %s, want TLS on masterPort+1", origin)
	}
	cfg := r.Config
	if cfg.TLS.Cert != "/etc/resolute/tls/tls.crt" || cfg.TLS.Key != "/etc/resolute/tls/tls.key" || cfg.Port != 8443 {
		t.Errorf("tls %+v port %d", cfg.TLS, cfg.Port)
	}
	if got := cfg.TaskMasterURL(); got != "https://determined-master-service-"+rel+"."+ns+".svc:8443" {
		t.Errorf("tasks reach the master at %q", got)
	}
	if cfg.Security.DefaultPassword != "old-style-pa55" || cfg.InitialPassword() != "old-style-pa55" {
		t.Errorf("security = %+v", cfg.Security)
	}
	pod := masterDeployment(t, r).Spec.Template.Spec
	if v := volume(t, pod, "tls"); v.Secret == nil || v.Secret.SecretName != "resolute-tls" {
		t.Errorf("tls volume %+v", v)
	}
	c := pod.Containers[0]
	if m := mount(t, c, "tls"); m.MountPath != "/etc/resolute/tls" || !m.ReadOnly {
		t.Errorf("tls mount %+v", m)
	}
	for _, p := range []*corev1.Probe{c.StartupProbe, c.ReadinessProbe, c.LivenessProbe} {
		if p.HTTPGet.Scheme != corev1.URISchemeHTTPS {
			t.Errorf("probe scheme %q with TLS in the master", p.HTTPGet.Scheme)
		}
	}
}

// checkIngress: the master and the task origin each on its host name,
// both behind the Ingress's TLS, and master.yaml says so.
func checkIngress(t *testing.T, r *rendered) {
	rel := r.Release
	ing := get[*networkingv1.Ingress](t, r, "Ingress", "determined-master-ingress-"+rel)
	if ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != "nginx" ||
		ing.Annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"] != "3600" {
		t.Errorf("Ingress class %v, annotations %v", ing.Spec.IngressClassName, ing.Annotations)
	}
	if len(ing.Spec.TLS) != 1 || ing.Spec.TLS[0].SecretName != "ml-tls" ||
		!slices.Equal(ing.Spec.TLS[0].Hosts, []string{"ml.example.com", "tasks.ml.example.com"}) {
		t.Errorf("Ingress TLS %+v", ing.Spec.TLS)
	}
	backends := map[string]int32{}
	for _, rule := range ing.Spec.Rules {
		for _, p := range rule.HTTP.Paths {
			if p.Path != "/" || p.Backend.Service == nil || p.Backend.Service.Name != "determined-master-service-"+rel {
				t.Errorf("Ingress path %+v", p)
				continue
			}
			backends[rule.Host] = p.Backend.Service.Port.Number
		}
	}
	if want := map[string]int32{"ml.example.com": 8080, "tasks.ml.example.com": 9000}; !reflect.DeepEqual(backends, want) {
		t.Errorf("Ingress hosts to Service ports %v, want %v", backends, want)
	}
	cfg := r.Config
	origin, warning := cfg.TaskOrigin()
	if cfg.URL() != "https://ml.example.com" || origin != "https://tasks.ml.example.com" || warning != "" || cfg.TaskPort() != 9000 {
		t.Errorf("master.yaml: the master at %s, the task origin at %s (%s) on port %d", cfg.URL(), origin, warning, cfg.TaskPort())
	}
}

// checkIngressTaskHosts: a wildcard tasksHost routes every task's host to
// the task origin's port, and the master gives every task its own host.
func checkIngressTaskHosts(t *testing.T, r *rendered) {
	ing := get[*networkingv1.Ingress](t, r, "Ingress", "determined-master-ingress-"+r.Release)
	if len(ing.Spec.TLS) != 1 || !slices.Equal(ing.Spec.TLS[0].Hosts, []string{"ml.example.com", "*.tasks.ml.example.com"}) {
		t.Errorf("Ingress TLS %+v", ing.Spec.TLS)
	}
	backends := map[string]int32{}
	for _, rule := range ing.Spec.Rules {
		for _, p := range rule.HTTP.Paths {
			backends[rule.Host] = p.Backend.Service.Port.Number
		}
	}
	if want := map[string]int32{"ml.example.com": 8080, "*.tasks.ml.example.com": 8081}; !reflect.DeepEqual(backends, want) {
		t.Errorf("Ingress hosts to Service ports %v, want %v", backends, want)
	}
	origin, warning := r.Config.TaskOrigin()
	if origin != "https://{task}.tasks.ml.example.com" || warning != "" || !origin.PerTask() ||
		origin.Origin("notebook-3") != "https://notebook-3.tasks.ml.example.com" {
		t.Errorf("master.yaml: the task origin %s (%s), want a host per task", origin, warning)
	}
}

func checkCPUSlots(t *testing.T, r *rendered) {
	cfg := r.Config
	rm := cfg.ResourceManager
	if rm.SlotType != "cpu" || rm.SlotResourceRequests.CPU != 7.5 || rm.MaxSlotsPerPod != 2 {
		t.Errorf("resource_manager %+v", rm)
	}
	tcd := cfg.TaskContainerDefaults
	spec, _ := tcd["cpu_pod_spec"].(map[string]any)
	if spec == nil || spec["kind"] != "Pod" || tcd["checkpoint_gc_pod_spec"] == nil || tcd["cpu_image"] != "python:3.12" || tcd["gpu_pod_spec"] != nil {
		t.Errorf("task_container_defaults = %v", tcd)
	}
	if cfg.NotebookTimeout != 1800 || cfg.TensorboardTimeout != 600 {
		t.Errorf("timeouts %d/%d", cfg.NotebookTimeout, cfg.TensorboardTimeout)
	}
	res := masterDeployment(t, r).Spec.Template.Spec.Containers[0].Resources
	if res.Limits.Cpu().String() != "2" || res.Limits.Memory().String() != "4Gi" {
		t.Errorf("master limits %v", res.Limits)
	}
}

func checkS3(t *testing.T, r *rendered) {
	wantStorage(t, r, map[string]any{"type": "s3", "bucket": "ckpts", "access_key": "AKIA-S3-ACCESS",
		"secret_key": "s3-SECRET-key", "endpoint_url": "http://minio.storage:9000", "prefix": "team-a",
		"save_experiment_best": 2, "save_trial_best": 3, "save_trial_latest": 4})
	// The storage reaches experiment configs as their lowest layer.
	if !strings.Contains(string(r.Config.Defaults()), "bucket: ckpts") {
		t.Errorf("experiment defaults lack the bucket:\n%s", r.Config.Defaults())
	}
}

func checkCoscheduler(t *testing.T, r *rendered) {
	rel, ns := r.Release, r.Namespace
	if got := r.Config.ResourceManager.DefaultScheduler; got != "coscheduler" {
		t.Errorf("default_scheduler = %q", got)
	}
	name := "resolute-coscheduler-" + rel
	d := get[*appsv1.Deployment](t, r, "Deployment", name)
	pod := d.Spec.Template.Spec
	if pod.ServiceAccountName != name || pod.PriorityClassName != "determined-system-priority" {
		t.Errorf("coscheduler pod: serviceAccount %q, priorityClass %q", pod.ServiceAccountName, pod.PriorityClassName)
	}
	if !strings.Contains(pod.Containers[0].Image, "scheduler-plugins/kube-scheduler") {
		t.Errorf("coscheduler image %q", pod.Containers[0].Image)
	}
	get[*corev1.ServiceAccount](t, r, "ServiceAccount", name)
	cm := get[*corev1.ConfigMap](t, r, "ConfigMap", name+"-config")
	var conf struct {
		Kind     string
		Profiles []struct {
			SchedulerName string `yaml:"schedulerName"`
			Plugins       struct {
				MultiPoint struct{ Enabled []struct{ Name string } } `yaml:"multiPoint"`
			}
		}
	}
	if err := yaml.Unmarshal([]byte(cm.Data["scheduler-config.yaml"]), &conf); err != nil {
		t.Fatal(err)
	}
	if conf.Kind != "KubeSchedulerConfiguration" || len(conf.Profiles) != 1 || conf.Profiles[0].SchedulerName != "coscheduler" ||
		len(conf.Profiles[0].Plugins.MultiPoint.Enabled) != 1 || conf.Profiles[0].Plugins.MultiPoint.Enabled[0].Name != "Coscheduling" {
		t.Errorf("scheduler config %+v", conf)
	}
	if v := volume(t, pod, "config"); v.ConfigMap == nil || v.ConfigMap.Name != cm.Name {
		t.Errorf("coscheduler config volume %+v", v)
	}
	bound := map[string]bool{}
	for _, o := range r.find("ClusterRoleBinding") {
		b := o.Obj.(*rbacv1.ClusterRoleBinding)
		if b.Subjects[0].Name == name && b.Subjects[0].Namespace == ns {
			bound[b.RoleRef.Name] = true
		}
	}
	for _, role := range []string{"system:kube-scheduler", "system:volume-scheduler", "resolute-" + ns + "-" + rel + "-coscheduler"} {
		if !bound[role] {
			t.Errorf("the coscheduler is not bound to %s (bound: %v)", role, bound)
		}
	}
	get[*rbacv1.ClusterRole](t, r, "ClusterRole", "resolute-"+ns+"-"+rel+"-coscheduler")
	rb := roleIn(t, r, "RoleBinding", "resolute-"+ns+"-"+rel+"-coscheduler-auth-reader", "kube-system").(*rbacv1.RoleBinding)
	if rb.RoleRef.Name != "extension-apiserver-authentication-reader" {
		t.Errorf("auth reader binding %+v", rb.RoleRef)
	}
	pc := get[*schedulingv1.PriorityClass](t, r, "PriorityClass", "determined-system-priority")
	if pc.Value != 1000000 {
		t.Errorf("determined-system-priority = %d", pc.Value)
	}
}

func checkTwoPools(t *testing.T, r *rendered) {
	pools := r.Config.ResourcePools
	if len(pools) != 2 || pools[0].PoolName != "prod_pool" || pools[1].PoolName != "dev_pool" ||
		pools[0].KubernetesNamespace == "" || pools[1].KubernetesNamespace == "" {
		t.Fatalf("resource_pools = %+v", pools)
	}
	spec, _ := pools[0].TaskContainerDefaults["gpu_pod_spec"].(map[string]any)
	if spec == nil || !strings.Contains(r.MasterYAML, "pool_taint") {
		t.Errorf("prod_pool's task_container_defaults = %v", pools[0].TaskContainerDefaults)
	}
	if rm := r.Config.ResourceManager; rm.DefaultComputeResourcePool != "prod_pool" || rm.DefaultAuxResourcePool != "dev_pool" {
		t.Errorf("default pools %q/%q", rm.DefaultComputeResourcePool, rm.DefaultAuxResourcePool)
	}
	if n := len(r.find("Role")); n != 3 {
		t.Errorf("%d Roles, want the release namespace's and one per pool", n)
	}
}

// TestChartFailures: values the chart refuses, with a message saying why.
func TestChartFailures(t *testing.T) {
	for _, c := range []struct{ name, values, want string }{
		{"no maxSlotsPerPod", "{}", "maxSlotsPerPod is required"},
		{"zero maxSlotsPerPod", "maxSlotsPerPod: 0", "maxSlotsPerPod is required"},
		{"s3 without bucket", "maxSlotsPerPod: 1\ncheckpointStorage: {type: s3}", "checkpointStorage.bucket is required"},
		{"gcs without bucket", "maxSlotsPerPod: 1\ncheckpointStorage: {type: gcs}", "checkpointStorage.bucket is required"},
		{"azure without container", "maxSlotsPerPod: 1\ncheckpointStorage: {type: azure, connection_string: x}", "checkpointStorage.container is required"},
		{"azure without credentials", "maxSlotsPerPod: 1\ncheckpointStorage: {type: azure, container: c}", "needs connection_string"},
		{"azure with both", "maxSlotsPerPod: 1\ncheckpointStorage: {type: azure, container: c, connection_string: x, account_url: y}", "not both"},
		{"unknown storage", "maxSlotsPerPod: 1\ncheckpointStorage: {type: nfs}", "checkpointStorage.type must be"},
		{"unknown slot type", "maxSlotsPerPod: 1\nslotType: tpu", "slotType must be gpu or cpu"},
		{"unknown scheduler", "maxSlotsPerPod: 1\ndefaultScheduler: volcano", "defaultScheduler must be"},
		{"an Ingress without the task origin's host", "maxSlotsPerPod: 1\ningress: {enabled: true, host: ml.example.com}", "ingress.enabled needs ingress.host"},
		{"an Ingress with one host for both", "maxSlotsPerPod: 1\ningress: {enabled: true, host: ml.example.com, tasksHost: ML.example.com}",
			"ingress.tasksHost must be another host name than ingress.host"},
		{"a wildcard inside the task origin's host", "maxSlotsPerPod: 1\ningress: {enabled: true, host: ml.example.com, tasksHost: 'tasks.*.example.com'}",
			"ingress.tasksHost may have a wildcard only as its first label"},
		{"the master's host among the tasks'", "maxSlotsPerPod: 1\ningress: {enabled: true, host: ml.tasks.example.com, tasksHost: '*.tasks.example.com'}",
			"ingress.host must not be one of the tasks' hosts"},
		{"the task origin on the master's port", "maxSlotsPerPod: 1\ntasksPort: 8080", "tasksPort must differ from masterPort"},
		{"a ServiceMonitor without /metrics", "maxSlotsPerPod: 1\nobservability: {serviceMonitor: {enabled: true}}",
			"observability.serviceMonitor.enabled needs observability.enablePrometheus"},
		{"a ServiceMonitor without a token", "maxSlotsPerPod: 1\nobservability: {enablePrometheus: true, serviceMonitor: {enabled: true}}",
			"observability.serviceMonitor.enabled needs observability.metricsToken"},
		{"a metrics token without /metrics", "maxSlotsPerPod: 1\nobservability: {metricsToken: abcdefabcdefabcdef}",
			"observability.metricsToken needs observability.enablePrometheus"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out, err := templateErr(t, "bad", "ns", c.values)
			if err == nil || !strings.Contains(out, c.want) {
				t.Errorf("helm template with %s: err %v, want an error saying %q:\n%.2000s", c.values, err, c.want, out)
			}
		})
	}
}

func TestHelmLint(t *testing.T) {
	for _, args := range [][]string{
		{"--set", "maxSlotsPerPod=8"},
		{"--set", "maxSlotsPerPod=8,defaultScheduler=coscheduler,useNodePortForMaster=true,tlsSecret=t,db.hostAddress=db"},
	} {
		out, err := runHelm(t, append([]string{"lint", "--strict", chartDir(t)}, args...)...)
		if err != nil || !strings.Contains(out, "0 chart(s) failed") {
			t.Errorf("helm lint %v: %v\n%s", args, err, out)
		}
	}
}

// TestChartVersion: the chart installs this release.
func TestChartVersion(t *testing.T) {
	var chart struct {
		APIVersion string `yaml:"apiVersion"`
		Name       string
		AppVersion string `yaml:"appVersion"`
	}
	data, err := os.ReadFile(filepath.Join(chartDir(t), "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &chart); err != nil {
		t.Fatal(err)
	}
	if chart.APIVersion != "v2" || chart.Name != "resolute" {
		t.Errorf("Chart.yaml: %+v", chart)
	}
	if want := strings.TrimSuffix(resolute.Version, "-dev"); chart.AppVersion != want {
		t.Errorf("appVersion %q, want the release %q (resolute.Version %q)", chart.AppVersion, want, resolute.Version)
	}
}

func appVersion(t testing.TB) string { return strings.TrimSuffix(resolute.Version, "-dev") }

func masterDeployment(t testing.TB, r *rendered) *appsv1.Deployment {
	t.Helper()
	return get[*appsv1.Deployment](t, r, "Deployment", "determined-master-deployment-"+r.Release)
}

func roleIn(t testing.TB, r *rendered, kind, name, ns string) any {
	t.Helper()
	for _, o := range r.Objects {
		if o.Kind == kind && o.Name == name && o.Namespace == ns {
			return o.Obj
		}
	}
	t.Fatalf("no %s %s in namespace %s", kind, name, ns)
	return nil
}

// wantRules asserts the rules grant exactly these verbs on these resources,
// and nothing with a wildcard.
func wantRules(t testing.TB, what string, rules []rbacv1.PolicyRule, want map[string][]string) {
	t.Helper()
	got := map[string][]string{}
	for _, rule := range rules {
		for _, res := range rule.Resources {
			got[res] = append(got[res], rule.Verbs...)
		}
		if slices.Contains(rule.Verbs, "*") || slices.Contains(rule.Resources, "*") || slices.Contains(rule.APIGroups, "*") {
			t.Errorf("%s: wildcard rule %+v", what, rule)
		}
	}
	for res := range got {
		slices.Sort(got[res])
		got[res] = slices.Compact(got[res])
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s grants %v, want %v", what, got, want)
	}
}

// wantStorage compares checkpoint_storage, as masterconf loaded it.
func wantStorage(t testing.TB, r *rendered, want map[string]any) {
	t.Helper()
	got := map[string]any{}
	for k, v := range r.Config.CheckpointStorage {
		got[k] = v
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("checkpoint_storage = %v, want %v", got, want)
	}
}

func volume(t testing.TB, pod corev1.PodSpec, name string) corev1.Volume {
	t.Helper()
	for _, v := range pod.Volumes {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no volume %q", name)
	return corev1.Volume{}
}

func hasVolume(pod corev1.PodSpec, name string) bool {
	for _, v := range pod.Volumes {
		if v.Name == name {
			return true
		}
	}
	return false
}

func mount(t testing.TB, c corev1.Container, name string) corev1.VolumeMount {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no mount of volume %q in %s", name, c.Name)
	return corev1.VolumeMount{}
}
