package handlers

import (
	"cmp"
	"net/http"
	"slices"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/views"
)

// handleAPIAllocationAggregated serves GET
// /api/v1/resources/allocation/aggregated?start_date=&end_date=[&period=]
// as Determined's: slot-seconds a day (or month) from start_date to
// end_date (both included), in all and by user, resource pool and
// workspace.
func (s *Server) handleAPIAllocationAggregated(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	entries, err := s.svc.Cluster.Usage(r.Context(), actorFrom(r), param(q, "start_date", "startDate"), param(q, "end_date", "endDate"), q.Get("period"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resolute.AllocationAggregatedResponse{ResourceEntries: entries})
}

// handleUsagePage serves GET /cluster/usage[?start=&end=&period=monthly]:
// Cluster → Usage, the last 30 days unless asked.
func (s *Server) handleUsagePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	today := s.now().UTC()
	u := views.UsagePage{Shell: s.shell(r, "Usage", "cluster"), Start: q.Get("start"), End: q.Get("end"), Monthly: q.Get("period") == "monthly"}
	u.Crumbs = []views.Crumb{{Label: "Cluster", Href: "/cluster"}}
	if u.Start == "" {
		u.Start = today.AddDate(0, 0, -29).Format(time.DateOnly)
	}
	if u.End == "" {
		u.End = today.Format(time.DateOnly)
	}
	period := resolute.PeriodDaily
	if u.Monthly {
		period = resolute.PeriodMonthly
	}
	entries, err := s.svc.Cluster.Usage(r.Context(), actorFrom(r), u.Start, u.End, period)
	status := http.StatusOK
	switch {
	case resolute.ErrorCode(err) == resolute.EInvalid:
		u.Error, status = resolute.ErrorMessage(err), http.StatusUnprocessableEntity
	case err != nil:
		s.error(w, r, err)
		return
	}
	u.TotalHours, u.By = usageTotals(entries)
	clearFlash(w, r)
	s.render(w, r, status, views.UsagePageView(u))
}

// usageTotals sums the periods: slot-hours in all and by user, pool and
// workspace, each largest first.
func usageTotals(entries []resolute.AllocationAggregate) (float64, []views.UsageGroup) {
	var total float64
	groups := []struct {
		title, field string
		of           func(resolute.AllocationAggregate) map[string]float64
	}{
		{"User", "byUsername", func(e resolute.AllocationAggregate) map[string]float64 { return e.ByUsername }},
		{"Resource Pool", "byResourcePool", func(e resolute.AllocationAggregate) map[string]float64 { return e.ByResourcePool }},
		{"Workspace", "byWorkspace", func(e resolute.AllocationAggregate) map[string]float64 { return e.ByWorkspace }},
	}
	out := make([]views.UsageGroup, len(groups))
	for i, g := range groups {
		sums := map[string]float64{}
		for _, e := range entries {
			for name, secs := range g.of(e) {
				sums[name] += secs / 3600
			}
		}
		out[i] = views.UsageGroup{Title: g.title, Field: g.field}
		for name, h := range sums {
			out[i].Rows = append(out[i].Rows, views.UsageRow{Name: name, Hours: h})
		}
		slices.SortFunc(out[i].Rows, func(a, b views.UsageRow) int {
			return cmp.Or(cmp.Compare(b.Hours, a.Hours), cmp.Compare(a.Name, b.Name))
		})
	}
	for _, e := range entries {
		total += e.Seconds / 3600
	}
	return total, out
}
