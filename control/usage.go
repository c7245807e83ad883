package control

import (
	"context"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
)

// maxUsagePeriods bounds one usage request: ten years of days.
const maxUsagePeriods = 3660

// Usage is the cluster's historical usage from the first to the last day
// given (YYYY-MM-DD, UTC, both included), a day or a month at a time:
// every allocation's slot-seconds in each period, by user, pool and
// workspace (Determined's GET /api/v1/resources/allocation/aggregated).
// Every signed-in user may read it; under RBAC, as in Determined, only a
// ClusterAdmin (it names every workspace's users and usage).
func (s *Cluster) Usage(ctx context.Context, a authz.Actor, startDate, endDate string, period string) ([]resolute.AllocationAggregate, error) {
	if err := authz.Can(a, authz.ReadUsage, authz.Cluster); err != nil {
		return nil, err
	}
	starts, ends, err := UsagePeriods(startDate, endDate, period)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.AllocationUsage(ctx, starts, ends)
	if err != nil {
		return nil, err
	}
	return aggregateUsage(starts, period, rows), nil
}

// UsagePeriods are the days (or months) from startDate to endDate, both
// included, as [start, end) bounds in UTC; monthly, the whole months those
// days are in.
func UsagePeriods(startDate, endDate, period string) (starts, ends []time.Time, err error) {
	from, err := time.Parse(time.DateOnly, startDate)
	if err != nil {
		return nil, nil, resolute.Errorf(resolute.EInvalid, "start_date: expected a date like 2026-01-31, got %q", startDate)
	}
	to, err := time.Parse(time.DateOnly, endDate)
	if err != nil {
		return nil, nil, resolute.Errorf(resolute.EInvalid, "end_date: expected a date like 2026-01-31, got %q", endDate)
	}
	if to.Before(from) {
		return nil, nil, resolute.Errorf(resolute.EInvalid, "end_date: %s is before start_date %s", endDate, startDate)
	}
	last := to.AddDate(0, 0, 1) // end_date is included
	next := func(t time.Time) time.Time { return t.AddDate(0, 0, 1) }
	switch period {
	case "", resolute.PeriodDaily:
	case resolute.PeriodMonthly:
		from = time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC)
		last = time.Date(to.Year(), to.Month()+1, 1, 0, 0, 0, 0, time.UTC)
		next = func(t time.Time) time.Time { return t.AddDate(0, 1, 0) }
	default:
		return nil, nil, resolute.Errorf(resolute.EInvalid, "period: expected %s or %s, got %q", resolute.PeriodDaily, resolute.PeriodMonthly, period)
	}
	for t := from; t.Before(last); t = next(t) {
		if len(starts) == maxUsagePeriods {
			return nil, nil, resolute.Errorf(resolute.EInvalid, "start_date to end_date: at most %d periods at once", maxUsagePeriods)
		}
		end := next(t)
		if end.After(last) {
			end = last
		}
		starts = append(starts, t)
		ends = append(ends, end)
	}
	return starts, ends, nil
}

// aggregateUsage is one entry per period, zero where nothing ran, with the
// rows' slot-seconds summed in all and by user, pool and workspace.
func aggregateUsage(starts []time.Time, period string, rows []db.UsageRow) []resolute.AllocationAggregate {
	if period == "" {
		period = resolute.PeriodDaily
	}
	out := make([]resolute.AllocationAggregate, len(starts))
	index := make(map[time.Time]int, len(starts))
	for i, t := range starts {
		index[t] = i
		out[i] = resolute.AllocationAggregate{PeriodStart: t.Format(time.DateOnly), Period: period,
			ByUsername: map[string]float64{}, ByResourcePool: map[string]float64{}, ByWorkspace: map[string]float64{}}
	}
	for _, r := range rows {
		i, ok := index[r.PeriodStart.UTC()]
		if !ok {
			continue
		}
		e := &out[i]
		e.Seconds += r.SlotSeconds
		e.ByUsername[r.Username] += r.SlotSeconds
		e.ByResourcePool[r.Pool] += r.SlotSeconds
		e.ByWorkspace[r.Workspace] += r.SlotSeconds
	}
	return out
}
