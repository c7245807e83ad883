// Package charttest tests the Helm chart in charts/resolute: helm lint, the
// objects `helm template` renders over a matrix of values (decoded strictly
// into Kubernetes' typed objects, the master.yaml loaded by masterconf as the
// master would), the values reference in docs/kubernetes.md, and, against
// the test control plane of k8s/k8stest, a server-side dry run of every
// object and a real `helm install`.
//
// helm comes from scripts/helm.sh (built from its Go module into the user's
// cache the first time), or from RESOLUTE_HELM.
package charttest
