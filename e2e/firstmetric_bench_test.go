package e2e

import (
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// BenchmarkTimeToFirstTrainingMetric is the time from running `det
// experiment create const.yaml .` in an example's directory to its trial's
// first training metric being readable from the API, on the local resource
// manager of a real master with two CPU slots: det packing and uploading the
// context, the master creating the experiment and scheduling its trial, the
// task's start (harness, Python, imports) and its first report.
// examples/pytorch-trial (torch, a PyTorchTrial under pytorch.Trainer, which
// reports every 20 batches) against examples/core-api-stdlib (the Core API,
// standard library only). It reports the median of the runs as
// s/first-metric and logs each:
//
//	go test ./e2e -run '^$' -bench TimeToFirstTrainingMetric -benchtime 5x
func BenchmarkTimeToFirstTrainingMetric(b *testing.B) {
	if err := exec.Command("/usr/bin/python3", "-c", "import torch, sklearn").Run(); err != nil {
		b.Skipf("/usr/bin/python3 cannot import torch and sklearn: %v", err)
	}
	const password = "first-metric-pw"
	m := handlerstest.Start(b, handlerstest.Options{Slots: 2, InitialPassword: password})
	login, err := client.New(m.URL).Login(b.Context(), "admin", password)
	if err != nil {
		b.Fatal(err)
	}
	api := client.New(m.URL, client.WithToken(login.Token))
	det := newDetCLI(b, m, password)

	for _, example := range []string{"pytorch-trial", "core-api-stdlib"} {
		b.Run(example, func(b *testing.B) {
			var took []time.Duration
			for range b.N {
				start := time.Now()
				id := det.create(b, "../examples/"+example, "const.yaml")
				firstTrainingMetric(b, api, id)
				took = append(took, time.Since(start))
				// Not timed: the slot is free again before the next run.
				b.StopTimer()
				if err := api.ExperimentAction(b.Context(), id, "kill"); err != nil {
					b.Fatal(err)
				}
				waitTerminal(b, api, id)
				b.StartTimer()
			}
			slices.Sort(took)
			b.ReportMetric(took[len(took)/2].Seconds(), "s/first-metric")
			b.Logf("%s: %d runs, first training metric after %v", example, len(took), took)
		})
	}
}

// firstTrainingMetric waits until experiment id's trial has reported
// training metrics.
func firstTrainingMetric(b *testing.B, api *client.Client, id int64) {
	b.Helper()
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("experiment %d reported no training metrics in 3 minutes", id)
		}
		trials, err := api.ExperimentTrials(b.Context(), id)
		if err != nil {
			b.Fatal(err)
		}
		if len(trials) == 0 {
			continue
		}
		ms, err := api.TrialMetrics(b.Context(), trials[0].ID, "training")
		if err != nil {
			b.Fatal(err)
		}
		if len(ms) > 0 {
			return
		}
	}
}

// waitTerminal waits until experiment id has ended and its trials' runs with
// it.
func waitTerminal(b *testing.B, api *client.Client, id int64) {
	b.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		e, err := api.Experiment(b.Context(), id)
		if err != nil {
			b.Fatal(err)
		}
		if resolute.Terminal(e.State) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("experiment %d is %s 2 minutes after kill", id, e.State)
		}
	}
}
