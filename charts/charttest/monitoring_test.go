package charttest

import (
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
)

// operatorObject reads an object of the Prometheus Operator (a
// ServiceMonitor), whose Go types this module does not import, with its
// kind and metadata only; ok is false for every other object.
func operatorObject(t testing.TB, doc []byte) (object, bool) {
	t.Helper()
	var head struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string
		Metadata   struct{ Name, Namespace string }
	}
	if err := yaml.Unmarshal(doc, &head); err != nil || !strings.HasPrefix(head.APIVersion, "monitoring.coreos.com/") {
		return object{}, false
	}
	return object{Kind: head.Kind, Name: head.Metadata.Name, Namespace: head.Metadata.Namespace, Raw: doc}, true
}

// serviceMonitor is the part of a ServiceMonitor the chart sets.
type serviceMonitor struct {
	Metadata struct{ Labels map[string]string }
	Spec     struct {
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		NamespaceSelector struct {
			MatchNames []string `yaml:"matchNames"`
		} `yaml:"namespaceSelector"`
		Endpoints []struct {
			Port, Path, Scheme, Interval string
			Authorization                struct {
				Type        string
				Credentials struct{ Name, Key string }
			}
			TLSConfig map[string]any `yaml:"tlsConfig"`
		}
	}
}

// TestTheServiceMonitorScrapesTheMasterWithItsToken renders the chart with
// /metrics on and a ServiceMonitor: master.yaml turns Prometheus on with
// the token, the token sits in the master's Secret (never a ConfigMap), and
// the ServiceMonitor selects the master's Service and sends the token from
// that Secret, over HTTPS when the master serves it. Without the value no
// ServiceMonitor is rendered.
func TestTheServiceMonitorScrapesTheMasterWithItsToken(t *testing.T) {
	const token = "prom-token-0123456789"
	for name, tc := range map[string]struct {
		values, scheme string
		tlsConfig      map[string]any
	}{
		"over HTTP by default": {values: "", scheme: "http"},
		"over HTTPS with tlsSecret and the tlsConfig given": {values: "tlsSecret: master-tls\n", scheme: "https",
			tlsConfig: map[string]any{"serverName": "ml.example.com"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			values := tc.values + "maxSlotsPerPod: 1\nobservability:\n  enablePrometheus: true\n  metricsToken: " + token +
				"\n  serviceMonitor:\n    enabled: true\n    interval: 15s\n    labels: {release: kps}\n"
			if tc.tlsConfig != nil {
				values += "    tlsConfig: {serverName: ml.example.com}\n"
			}
			r := template(t, "mon", "obs", values)
			if !r.Config.Observability.EnablePrometheus || r.Config.Observability.MetricsToken != token {
				t.Errorf("master.yaml observability = %+v", r.Config.Observability)
			}
			for _, cm := range r.find("ConfigMap") {
				if strings.Contains(string(cm.Raw), token) {
					t.Errorf("ConfigMap %s holds the metrics token", cm.Name)
				}
			}
			sec := get[*corev1.Secret](t, r, "Secret", "determined-master-config-mon")
			if sec.StringData["metrics-token"] != token {
				t.Errorf("the master's Secret has metrics-token %q", sec.StringData["metrics-token"])
			}
			mons := r.find("ServiceMonitor")
			if len(mons) != 1 || mons[0].Namespace != "obs" {
				t.Fatalf("ServiceMonitors: %+v", mons)
			}
			var sm serviceMonitor
			if err := yaml.Unmarshal(mons[0].Raw, &sm); err != nil {
				t.Fatal(err)
			}
			if sm.Metadata.Labels["release"] != "kps" {
				t.Errorf("labels = %v, want release: kps among them", sm.Metadata.Labels)
			}
			svc := get[*corev1.Service](t, r, "Service", "determined-master-service-mon")
			if len(sm.Spec.Selector.MatchLabels) == 0 {
				t.Fatal("the ServiceMonitor selects every Service")
			}
			for k, v := range sm.Spec.Selector.MatchLabels {
				if svc.Labels[k] != v {
					t.Errorf("the selector %s=%s does not select the master's Service (labels %v)", k, v, svc.Labels)
				}
			}
			for _, other := range r.find("Service") {
				if other.Name == svc.Name {
					continue
				}
				var meta struct {
					Metadata struct{ Labels map[string]string }
				}
				yaml.Unmarshal(other.Raw, &meta)
				matches := true
				for k, v := range sm.Spec.Selector.MatchLabels {
					matches = matches && meta.Metadata.Labels[k] == v
				}
				if matches {
					t.Errorf("the selector also selects Service %s", other.Name)
				}
			}
			if !reflect.DeepEqual(sm.Spec.NamespaceSelector.MatchNames, []string{"obs"}) {
				t.Errorf("namespaceSelector = %v", sm.Spec.NamespaceSelector.MatchNames)
			}
			if len(sm.Spec.Endpoints) != 1 {
				t.Fatalf("endpoints: %+v", sm.Spec.Endpoints)
			}
			ep := sm.Spec.Endpoints[0]
			portNamed := false
			for _, p := range svc.Spec.Ports {
				portNamed = portNamed || p.Name == ep.Port
			}
			if !portNamed || ep.Path != "/metrics" || ep.Scheme != tc.scheme || ep.Interval != "15s" {
				t.Errorf("endpoint = %+v, want a port of the Service (%v), /metrics over %s every 15s", ep, svc.Spec.Ports, tc.scheme)
			}
			if a := ep.Authorization; a.Type != "Bearer" || a.Credentials.Name != sec.Name || a.Credentials.Key != "metrics-token" {
				t.Errorf("authorization = %+v, want the bearer token from %s/metrics-token", a, sec.Name)
			}
			if !reflect.DeepEqual(ep.TLSConfig, tc.tlsConfig) {
				t.Errorf("tlsConfig = %v, want %v", ep.TLSConfig, tc.tlsConfig)
			}
		})
	}
	if mons := template(t, "plain", "obs", "maxSlotsPerPod: 1\n").find("ServiceMonitor"); len(mons) != 0 {
		t.Errorf("a ServiceMonitor was rendered without observability.serviceMonitor.enabled: %+v", mons)
	}
}
