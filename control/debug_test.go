package control_test

import "testing"

// TestADebugExperimentsTrialsRunWithDETDebug: debug: true in a config reaches
// the trials as DET_DEBUG=true, which the harness reads (det.get_cluster_info
// and its log level); without it the variable is unset.
func TestADebugExperimentsTrialsRunWithDETDebug(t *testing.T) {
	h := newHarness(t, 2)
	h.create(single)
	h.create(single + "debug: true\n")
	h.admit()
	run := h.rm.running()
	if len(run) != 2 {
		t.Fatalf("launched %+v", run)
	}
	debug := 0
	for _, r := range run {
		switch r.Env["DET_DEBUG"] {
		case "true":
			debug++
		case "":
		default:
			t.Errorf("DET_DEBUG=%q", r.Env["DET_DEBUG"])
		}
	}
	if debug != 1 {
		t.Fatalf("%d trials with DET_DEBUG=true, want the debug experiment's one", debug)
	}
}
