package control

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
)

func TestUsagePeriods(t *testing.T) {
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	tests := map[string]struct {
		start, end, period string
		starts, ends       []time.Time
		err                bool
	}{
		"one day is one period to the next midnight": {"2026-03-01", "2026-03-01", "",
			[]time.Time{day("2026-03-01")}, []time.Time{day("2026-03-02")}, false},
		"days across a month end include the last": {"2026-02-27", "2026-03-01", resolute.PeriodDaily,
			[]time.Time{day("2026-02-27"), day("2026-02-28"), day("2026-03-01")},
			[]time.Time{day("2026-02-28"), day("2026-03-01"), day("2026-03-02")}, false},
		"months are whole months of the days given": {"2026-01-15", "2026-02-03", resolute.PeriodMonthly,
			[]time.Time{day("2026-01-01"), day("2026-02-01")}, []time.Time{day("2026-02-01"), day("2026-03-01")}, false},
		"an end before the start is refused":     {"2026-03-02", "2026-03-01", "", nil, nil, true},
		"a date that is not a date is refused":   {"yesterday", "2026-03-01", "", nil, nil, true},
		"an unknown period is refused":           {"2026-03-01", "2026-03-01", "WEEKLY", nil, nil, true},
		"more than ten years of days is refused": {"2000-01-01", "2026-01-01", "", nil, nil, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			starts, ends, err := UsagePeriods(tc.start, tc.end, tc.period)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %t", err, tc.err)
			}
			if diff := cmp.Diff(tc.starts, starts); diff != "" {
				t.Errorf("starts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.ends, ends); diff != "" {
				t.Errorf("ends (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAggregateUsageSumsByUserPoolAndWorkspaceAndKeepsEmptyPeriods(t *testing.T) {
	d1, _ := time.Parse(time.DateOnly, "2026-03-01")
	d2 := d1.AddDate(0, 0, 1)
	got := aggregateUsage([]time.Time{d1, d2}, "", []db.UsageRow{
		{PeriodStart: d1, Username: "ann", Pool: "gpu", Workspace: "w", SlotSeconds: 10},
		{PeriodStart: d1, Username: "bob", Pool: "gpu", Workspace: "v", SlotSeconds: 5},
	})
	want := []resolute.AllocationAggregate{
		{PeriodStart: "2026-03-01", Period: resolute.PeriodDaily, Seconds: 15, ByUsername: map[string]float64{"ann": 10, "bob": 5},
			ByResourcePool: map[string]float64{"gpu": 15}, ByWorkspace: map[string]float64{"w": 10, "v": 5}},
		{PeriodStart: "2026-03-02", Period: resolute.PeriodDaily, ByUsername: map[string]float64{},
			ByResourcePool: map[string]float64{}, ByWorkspace: map[string]float64{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
