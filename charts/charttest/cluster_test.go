package charttest

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/k8s/k8stest"
)

func TestMain(m *testing.M) {
	code := dbtest.Main(m)
	k8stest.Stop()
	os.Exit(code)
}

// sharedPriorityClasses are the chart's cluster-wide objects with fixed
// names: another release (or test) may have made them already.
var sharedPriorityClasses = map[string]bool{"determined-medium-priority": true, "determined-system-priority": true}

// TestChartDryRunOnAPIServer: every object of every point of the values
// matrix is accepted by a real kube-apiserver (server-side dry run, strict
// field validation): the API server is the schema check.
func TestChartDryRunOnAPIServer(t *testing.T) {
	c := k8stest.Start(t)
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))

	for _, cc := range matrix() {
		t.Run(cc.name, func(t *testing.T) {
			t.Parallel()
			ns := c.Namespace(t)
			pools := map[string]string{}
			for _, p := range cc.poolNamespaces {
				pools[p] = c.Namespace(t)
			}
			cc = cc.withNamespaces(pools)
			r := template(t, "dry", ns, cc.values)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for _, o := range r.Objects {
				u := &unstructured.Unstructured{}
				if err := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(o.Raw), 4096).Decode(&u.Object); err != nil {
					t.Fatalf("%s %s: %v", o.Kind, o.Name, err)
				}
				gvk := u.GroupVersionKind()
				mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				if err != nil {
					t.Errorf("%s %s: the API server does not serve %s: %v", o.Kind, o.Name, gvk, err)
					continue
				}
				var res dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
				if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
					res = dyn.Resource(mapping.Resource).Namespace(u.GetNamespace())
				}
				_, err = res.Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
				if apierrors.IsAlreadyExists(err) && sharedPriorityClasses[o.Name] {
					continue
				}
				if err != nil {
					t.Errorf("the API server rejects %s %s/%s: %v\n%s", o.Kind, u.GetNamespace(), o.Name, err, o.Raw)
				}
			}
		})
	}
}

// helmInstall installs the chart with helm itself into namespace ns of the
// test control plane and uninstalls it when the test ends. The fixed-name
// PriorityClasses are created unless they exist already (another release,
// test or master made them then).
func helmInstall(t *testing.T, c *k8stest.Cluster, rel, ns string, set ...string) (ownsPriorityClass bool) {
	t.Helper()
	ctx := context.Background()
	ownsPriorityClass = true
	for name := range sharedPriorityClasses {
		_, err := c.Client.SchedulingV1().PriorityClasses().Get(ctx, name, metav1.GetOptions{})
		ownsPriorityClass = ownsPriorityClass && apierrors.IsNotFound(err)
	}
	install := func(own bool) (string, error) {
		args := []string{"install", rel, chartDir(t), "--namespace", ns, "--kubeconfig", c.Kubeconfig}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		if !own {
			args = append(args, "--set", "createNonNamespacedObjects=false")
		}
		return runHelm(t, args...)
	}
	out, err := install(ownsPriorityClass)
	if err != nil && ownsPriorityClass && strings.Contains(out, "-priority") && strings.Contains(out, "exists") {
		// Made by someone else between the check and the install.
		ownsPriorityClass = false
		_, _ = runHelm(t, "uninstall", rel, "--namespace", ns, "--kubeconfig", c.Kubeconfig)
		out, err = install(false)
	}
	if err != nil {
		t.Fatalf("helm install %s: %v\n%s", rel, err, out)
	}
	if !strings.Contains(out, "STATUS: deployed") || !strings.Contains(out, "determined-master-service-"+rel) {
		t.Errorf("helm install printed no deployed status or no notes on reaching the master:\n%s", out)
	}
	t.Cleanup(func() {
		if out, err := runHelm(t, "uninstall", rel, "--namespace", ns, "--kubeconfig", c.Kubeconfig); err != nil &&
			!strings.Contains(out, "not found") {
			t.Errorf("helm uninstall %s: %v\n%s", rel, err, out)
		}
	})
	return ownsPriorityClass
}

// TestHelmInstall: `helm install resolute charts/resolute --set
// maxSlotsPerPod=8` into a fresh namespace creates every object, helm upgrade
// rolls the master with its new config, helm uninstall removes the
// cluster-wide objects; with db.hostAddress set, no database objects.
func TestHelmInstall(t *testing.T) {
	c := k8stest.Start(t)

	t.Run("bundled-database", func(t *testing.T) {
		ns := c.Namespace(t)
		owns := helmInstall(t, c, "resolute", ns, "maxSlotsPerPod=8")
		ctx := context.Background()
		cs := c.Client
		must := func(what string, err error) {
			t.Helper()
			if err != nil {
				t.Errorf("%s: %v", what, err)
			}
		}
		_, err := cs.AppsV1().Deployments(ns).Get(ctx, "determined-master-deployment-resolute", metav1.GetOptions{})
		must("master Deployment", err)
		sec, err := cs.CoreV1().Secrets(ns).Get(ctx, "determined-master-config-resolute", metav1.GetOptions{})
		must("master config Secret", err)
		if err == nil && !strings.Contains(string(sec.Data["master.yaml"]), "type: kubernetes") {
			t.Errorf("master.yaml in the Secret:\n%s", sec.Data["master.yaml"])
		}
		svc, err := cs.CoreV1().Services(ns).Get(ctx, "determined-master-service-resolute", metav1.GetOptions{})
		must("master Service", err)
		if err == nil && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
			t.Errorf("master Service type %s", svc.Spec.Type)
		}
		_, err = cs.CoreV1().ServiceAccounts(ns).Get(ctx, "determined-master-resolute", metav1.GetOptions{})
		must("ServiceAccount", err)
		_, err = cs.RbacV1().Roles(ns).Get(ctx, "determined-master-resolute", metav1.GetOptions{})
		must("Role", err)
		_, err = cs.RbacV1().RoleBindings(ns).Get(ctx, "determined-master-resolute", metav1.GetOptions{})
		must("RoleBinding", err)
		_, err = cs.RbacV1().ClusterRoles().Get(ctx, "resolute-"+ns+"-resolute", metav1.GetOptions{})
		must("ClusterRole", err)
		_, err = cs.RbacV1().ClusterRoleBindings().Get(ctx, "resolute-"+ns+"-resolute", metav1.GetOptions{})
		must("ClusterRoleBinding", err)
		_, err = cs.AppsV1().Deployments(ns).Get(ctx, "determined-db-deployment-resolute", metav1.GetOptions{})
		must("database Deployment", err)
		_, err = cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "determined-db-pvc-resolute", metav1.GetOptions{})
		must("database PersistentVolumeClaim", err)
		_, err = cs.CoreV1().Services(ns).Get(ctx, "determined-db-service-resolute", metav1.GetOptions{})
		must("database Service", err)
		pc, err := cs.SchedulingV1().PriorityClasses().Get(ctx, "determined-medium-priority", metav1.GetOptions{})
		must("PriorityClass", err)
		if err == nil && pc.Value != 50 {
			t.Errorf("determined-medium-priority = %d", pc.Value)
		}
		if sys, err := cs.SchedulingV1().PriorityClasses().Get(ctx, "determined-system-priority", metav1.GetOptions{}); err != nil || sys.Value != 1000000 {
			t.Errorf("determined-system-priority (checkpoint GC pods): %v %v", err, sys)
		}
		if owns && pc != nil && pc.Annotations["meta.helm.sh/release-namespace"] != ns {
			t.Errorf("the PriorityClass is not the release's: %v", pc.Annotations)
		} else if !owns {
			t.Log("determined-medium-priority existed already; installed with createNonNamespacedObjects=false")
		}

		// helm upgrade with a changed value rewrites master.yaml and rolls
		// the master (the pod template carries the config's checksum).
		before, err := cs.AppsV1().Deployments(ns).Get(ctx, "determined-master-deployment-resolute", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"upgrade", "resolute", chartDir(t), "--namespace", ns, "--kubeconfig", c.Kubeconfig,
			"--reuse-values", "--set", "maxSlotsPerPod=4"}
		if out, err := runHelm(t, args...); err != nil {
			t.Fatalf("helm upgrade: %v\n%s", err, out)
		}
		after, err := cs.AppsV1().Deployments(ns).Get(ctx, "determined-master-deployment-resolute", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if sum := "checksum/config"; before.Spec.Template.Annotations[sum] == after.Spec.Template.Annotations[sum] {
			t.Error("helm upgrade with a new maxSlotsPerPod left the master's pod template unchanged")
		}
		sec, err = cs.CoreV1().Secrets(ns).Get(ctx, "determined-master-config-resolute", metav1.GetOptions{})
		if err != nil || !strings.Contains(string(sec.Data["master.yaml"]), "max_slots_per_pod: 4") {
			t.Errorf("master.yaml after the upgrade (%v):\n%s", err, sec.Data["master.yaml"])
		}

		// helm uninstall removes the cluster-wide objects too.
		if out, err := runHelm(t, "uninstall", "resolute", "--namespace", ns, "--kubeconfig", c.Kubeconfig); err != nil {
			t.Fatalf("helm uninstall: %v\n%s", err, out)
		}
		if _, err := cs.RbacV1().ClusterRoles().Get(ctx, "resolute-"+ns+"-resolute", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the ClusterRole outlived helm uninstall: %v", err)
		}
		if _, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, "resolute-"+ns+"-resolute", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the ClusterRoleBinding outlived helm uninstall: %v", err)
		}
		if _, err := cs.SchedulingV1().PriorityClasses().Get(ctx, "determined-medium-priority", metav1.GetOptions{}); owns && !apierrors.IsNotFound(err) {
			t.Errorf("the release's PriorityClass outlived helm uninstall: %v", err)
		}
	})

	t.Run("external-database", func(t *testing.T) {
		ns := c.Namespace(t)
		helmInstall(t, c, "resolute-ext", ns, "maxSlotsPerPod=8", "db.hostAddress=db.example.com")
		ctx := context.Background()
		cs := c.Client
		if _, err := cs.AppsV1().Deployments(ns).Get(ctx, "determined-master-deployment-resolute-ext", metav1.GetOptions{}); err != nil {
			t.Errorf("master Deployment: %v", err)
		}
		deps, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svcs, err := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pvcs, err := cs.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(deps.Items) != 1 || len(svcs.Items) != 1 || len(pvcs.Items) != 0 {
			t.Errorf("with db.hostAddress: %d Deployments, %d Services, %d claims; want only the master's", len(deps.Items), len(svcs.Items), len(pvcs.Items))
		}
	})
}
