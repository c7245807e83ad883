package control_test

import "testing"

// TestATrialWithSlotsGetsTheCUDAImageAndVariablesAndOneWithoutTheCPUOnes:
// environment.image and environment.environment_variables are chosen by
// device: cuda (or its old name gpu) for a trial that holds slots, cpu for
// one that holds none.
func TestATrialWithSlotsGetsTheCUDAImageAndVariablesAndOneWithoutTheCPUOnes(t *testing.T) {
	h := newHarness(t, 2)
	const env = "environment:\n  image: {cpu: img:cpu, cuda: img:cuda}\n  environment_variables: {cpu: [WHICH=cpu], cuda: [WHICH=cuda]}\n"
	withSlots := h.create(single + env)
	without := h.create(single + env + "resources: {slots_per_trial: 0}\n")
	h.admit()
	seen := 0
	for _, r := range h.rm.running() {
		want := map[int64]string{withSlots.ID: "cuda", without.ID: "cpu"}[h.trialExperiment(r)]
		if r.Image != "img:"+want || r.Env["WHICH"] != want {
			t.Errorf("experiment %d: image %q, WHICH=%q, want the %s ones", h.trialExperiment(r), r.Image, r.Env["WHICH"], want)
		}
		seen++
	}
	if seen != 2 {
		t.Fatalf("%d trials started, want 2", seen)
	}
}
