// Package k8stest gives tests a real Kubernetes control plane: etcd,
// kube-apiserver and kube-scheduler, with kwok playing the kubelets of fake
// nodes (see scripts/k8s.sh, which builds and starts them). It is imported
// by tests only.
//
// Start returns the cluster that RESOLUTE_TEST_KUBECONFIG names (scripts/test.sh
// starts one for the whole run) or else starts a private one for the test
// process, once; a package whose tests call Start should stop it with Main:
//
//	func TestMain(m *testing.M) { k8stest.Main(m) }
//
// (without Main the control plane still stops, a second or so after the
// process ends, through a watcher that scripts/k8s.sh leaves behind).
//
// Tests share the control plane and run in parallel, so each one isolates
// itself: Namespace gives it a namespace of its own, AddNodes nodes of its own
// that carry a label unique to the test, which its pods select.
//
// kwok's nodes only pretend to run pods. RunPods runs the pods bound to a
// test's nodes as local processes, so an end-to-end test can drive a real
// task through the Kubernetes API: volumes become directories under a root of
// the pod's own, init containers and then the task container run as `sh`
// processes with their mount paths rewritten into that root, their output is
// what `kubectl logs` returns, `kubectl exec` runs commands in their working
// directory, their exit code becomes the pod's status, and deleting the pod
// signals them.
//
// The control plane has no kube-controller-manager: nothing garbage-collects
// owned objects, empties deleted namespaces (Namespace's cleanup does it for
// the test's own), creates service accounts, evicts pods or marks nodes
// NotReady. The apiserver runs without the ServiceAccount and
// TaintNodesByCondition admission plugins for that reason.
//
// Pods share the test machine's network: a pod's IP is a loopback address
// of its own (127.a.b.c, from kwok), so a process that listens on its pod IP
// is reachable there; two that listen on 0.0.0.0 and the same port clash.
//
// The package must not be imported by non-test code.
package k8stest
