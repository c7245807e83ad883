package main

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
)

// resourcesCmd is `det resources`: historical usage, as Determined's.
func (a *app) resourcesCmd() *cobra.Command {
	cmd := group("resources", "Query historical resource allocation", "res")
	cmd.AddCommand(a.resourcesAggregatedCmd(), a.resourcesAllocationsCmd())
	return cmd
}

// resourcesAggregatedCmd is Determined's `det resources aggregated
// START_DATE END_DATE [--monthly] [--json]`: CSV unless --json.
func (a *app) resourcesAggregatedCmd() *cobra.Command {
	var asJSON, monthly bool
	cmd := &cobra.Command{
		Use: "aggregated START_DATE END_DATE [--monthly] [--json]", Aliases: []string{"agg"},
		Short: "Slot-seconds a day (or month) from START_DATE to END_DATE (YYYY-MM-DD, both included), by user, pool and workspace, as CSV",
		Args:  args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			entries, err := s.AllocationAggregated(cmd.Context(), argv[0], argv[1], monthly)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, resolute.AllocationAggregatedResponse{ResourceEntries: entries})
			}
			var rows [][]string
			for _, e := range entries {
				rows = append(rows, []string{e.PeriodStart, e.Period, "total", "", seconds(e.Seconds)})
				for _, by := range []struct {
					kind string
					m    map[string]float64
				}{{"user", e.ByUsername}, {"resource_pool", e.ByResourcePool}, {"workspace", e.ByWorkspace}} {
					for _, name := range sortedKeys(by.m) {
						rows = append(rows, []string{e.PeriodStart, e.Period, by.kind, name, seconds(by.m[name])})
					}
				}
			}
			return writeCSV(a.stdout, []string{"period_start", "period", "aggregation_type", "aggregation_key", "seconds"}, rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "output JSON rather than CSV")
	cmd.Flags().BoolVar(&monthly, "monthly", false, "aggregate by month rather than by day")
	return cmd
}

// resourcesAllocationsCmd is `det resources allocations [--start D]
// [--end D]`: the slot-hours each user, pool and workspace used in the
// range (default the last 30 days).
func (a *app) resourcesAllocationsCmd() *cobra.Command {
	var lf listFlags
	var start, end string
	cmd := &cobra.Command{
		Use:   "allocations [--start YYYY-MM-DD] [--end YYYY-MM-DD] [--csv | --json]",
		Short: "Slot-hours used by each user, resource pool and workspace from --start to --end (default the last 30 days)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := lf.check(); err != nil {
				return err
			}
			today := time.Now().UTC()
			if end == "" {
				end = today.Format(time.DateOnly)
			}
			if start == "" {
				start = today.AddDate(0, 0, -29).Format(time.DateOnly)
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			entries, err := s.AllocationAggregated(cmd.Context(), start, end, false)
			if err != nil {
				return err
			}
			type total struct {
				Group     string  `json:"group"` // user, resource_pool or workspace
				Name      string  `json:"name"`
				SlotHours float64 `json:"slotHours"`
			}
			var totals []total
			for _, g := range []struct {
				group string
				of    func(resolute.AllocationAggregate) map[string]float64
			}{
				{"user", func(e resolute.AllocationAggregate) map[string]float64 { return e.ByUsername }},
				{"resource_pool", func(e resolute.AllocationAggregate) map[string]float64 { return e.ByResourcePool }},
				{"workspace", func(e resolute.AllocationAggregate) map[string]float64 { return e.ByWorkspace }},
			} {
				sums := map[string]float64{}
				for _, e := range entries {
					for k, v := range g.of(e) {
						sums[k] += v / 3600
					}
				}
				var part []total
				for k, v := range sums {
					part = append(part, total{g.group, k, v})
				}
				slices.SortFunc(part, func(x, y total) int {
					return cmp.Or(cmp.Compare(y.SlotHours, x.SlotHours), cmp.Compare(x.Name, y.Name))
				})
				totals = append(totals, part...)
			}
			totals = page(lf, totals)
			if lf.asJSON {
				return printJSON(a.stdout, totals)
			}
			rows := make([][]string, len(totals))
			for i, t := range totals {
				rows[i] = []string{t.Group, t.Name, strconv.FormatFloat(t.SlotHours, 'f', 2, 64)}
			}
			if !lf.csv {
				fmt.Fprintf(a.stdout, "Slot-hours from %s to %s\n", start, end)
			}
			return table(lf.out(a.stdout), []string{"Group", "Name", "Slot-Hours"}, rows)
		},
	}
	cmd.Flags().StringVar(&start, "start", "", "first day to include, YYYY-MM-DD (UTC; default 29 days before --end)")
	cmd.Flags().StringVar(&end, "end", "", "last day to include, YYYY-MM-DD (UTC; default today)")
	lf.add(cmd)
	return cmd
}

// seconds prints slot-seconds with millisecond precision.
func seconds(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }

// sortedKeys are m's keys in order.
func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
