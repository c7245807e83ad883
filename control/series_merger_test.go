package control_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
)

func TestStoredReportsWakeTheSeriesMergerWhichMergesThemOnce(t *testing.T) {
	h := newHarness(t, 1)
	h.create(single)
	h.admit()
	trial := h.trialOf(h.rm.running()[0])
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	writer := control.NewMetricsWriter(h.db, quietLogger())
	merger := control.NewSeriesMerger(h.db, quietLogger())
	merger.Debounce, merger.Every = 20*time.Millisecond, time.Hour // only a wake merges here
	merged := make(chan int, 16)
	merger.OnMerged(func(n int) { merged <- n })
	writer.AfterStore(merger.Wake)
	go merger.Run(ctx)
	go writer.Run(ctx)
	for step := int64(1); step <= 3; step++ {
		err := writer.Write(ctx, resolute.MetricsReport{TrialID: trial, TrialRunID: 1, StepsCompleted: step, Group: "validation",
			Metrics: json.RawMessage(`{"avg_metrics": {"loss": 0.5}}`)})
		if err != nil {
			t.Fatal(err)
		}
	}
	total := 0
	for total < 3 {
		select {
		case n := <-merged:
			total += n
		case <-time.After(30 * time.Second):
			t.Fatalf("after 30 s the merger merged %d of the 3 reports stored", total)
		}
	}
	if n, err := h.db.MergeSeries(h.ctx); err != nil || n != 0 {
		t.Errorf("after the merger, %d reports were left to merge (%v)", n, err)
	}
}
