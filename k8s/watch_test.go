package k8s

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resolute-ml/resolute"
)

func TestPodNotesSayWhatWentWrongInWords(t *testing.T) {
	pod := func(s corev1.PodStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: s}
	}
	tests := map[string]struct {
		pod  *corev1.Pod
		want string
	}{
		"an image that cannot be pulled": {pod(corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: TaskContainerName,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "pull access denied for nope"}}}}}),
			"WARNING|pod p, container determined-container: ErrImagePull: pull access denied for nope"},
		"a container killed for memory": {pod(corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: TaskContainerName,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}}}}),
			"ERROR|pod p, container determined-container was killed for using more memory than its limit (OOMKilled)"},
		"an eviction": {pod(corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."}),
			"ERROR|pod p was evicted: The node was low on resource: memory."},
		"an init container's bad image": {pod(corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{{Name: InitContainerName,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "back-off"}}}}}),
			"WARNING|pod p, container determined-init-container: ImagePullBackOff: back-off"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := podNotes(tc.pod)
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("notes = %q, want %q", got, tc.want)
			}
		})
	}
	if n := podNotes(pod(corev1.PodStatus{Phase: corev1.PodRunning})); len(n) != 0 {
		t.Errorf("a running pod has notes %q", n)
	}
}

func TestExitOfAFailedPodIsItsTaskContainersStatus(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Phase: corev1.PodFailed,
		ContainerStatuses: []corev1.ContainerStatus{{Name: TaskContainerName,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}}}
	code, why := exitOf(p)
	if code != 137 || !strings.Contains(why, "OOMKilled") {
		t.Errorf("exitOf = %d, %q", code, why)
	}
	p.Status.ContainerStatuses = nil
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: InitContainerName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}}}}
	if code, why := exitOf(p); code != 2 || !strings.Contains(why, "init container") {
		t.Errorf("exitOf with a failed init container = %d, %q", code, why)
	}
}

func TestNodeSlotIDsKeepHeldSlotsAndLeaveRoomForOtherPods(t *testing.T) {
	n := NodeSlots{Node: "n", Total: 8, Foreign: 3, Held: map[string][]int{"a": {5, 6}}}
	got := n.SlotIDs()
	want := []int{0, 1, 2, 5, 6}
	if len(got) != len(want) {
		t.Fatalf("SlotIDs = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("SlotIDs = %v, want %v", got, want)
		}
	}
}

func TestANodesAgentMarksTheSlotsItCannotOfferAsForeign(t *testing.T) {
	n := NodeSlots{Node: "n", Total: 8, Foreign: 3, Held: map[string][]int{"a": {5, 6}}}
	a := n.agent("gpu", "cuda")
	var got []string
	for _, s := range a.Slots {
		got = append(got, fmt.Sprintf("%d:%s:%v", s.ID, s.AllocationID, s.Foreign))
	}
	want := "0::false 1::false 2::false 3::true 4::true 5:a:false 6:a:false 7::true"
	if strings.Join(got, " ") != want || a.ID != "n" || a.ResourcePool != "gpu" || a.Slots[0].Device != "cuda" {
		t.Errorf("agent %s in %q: slots %v, want %s", a.ID, a.ResourcePool, got, want)
	}
}

func TestEveryTaskGetsTheHarnessAndItsResourcesType(t *testing.T) {
	files, err := readFiles(fstest.MapFS{"determined/__init__.py": {Data: []byte("x = 1\n")}}, harnessDir)
	if err != nil {
		t.Fatal(err)
	}
	m := &Manager{harness: files}
	spec := resolute.LaunchSpec{Env: map[string]string{"A": "1", "DET_RESOURCES_TYPE": "mine"},
		Files: map[string][]byte{"note.txt": []byte("hi")}, PythonPath: []string{"lib"}}
	got := m.withHarness(spec)
	if got.Env["DET_RESOURCES_TYPE"] != "k8s-pod" || got.Env["A"] != "1" || spec.Env["DET_RESOURCES_TYPE"] != "mine" {
		t.Errorf("env %v (the caller's %v)", got.Env, spec.Env)
	}
	if string(got.Files[".resolute/harness/determined/__init__.py"]) != "x = 1\n" || string(got.Files["note.txt"]) != "hi" || len(spec.Files) != 1 {
		t.Errorf("files %v (the caller's %v)", got.Files, spec.Files)
	}
	if strings.Join(got.PythonPath, ":") != ".resolute/harness:lib" {
		t.Errorf("PYTHONPATH entries %v", got.PythonPath)
	}
	if bare := (&Manager{}).withHarness(resolute.LaunchSpec{}); bare.Env["DET_RESOURCES_TYPE"] != "k8s-pod" || len(bare.Files) != 0 || len(bare.PythonPath) != 0 {
		t.Errorf("without a harness: %+v", bare)
	}
}
