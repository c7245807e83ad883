package main

import (
	"encoding/csv"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// runCommand runs a command to its end and returns its task id.
func (c *cli) runCommand(args ...string) string {
	c.t.Helper()
	r := c.run("", append([]string{"cmd", "run"}, args...)...)
	if r.code != 0 {
		c.t.Fatalf("det cmd run %v: %d %s", args, r.code, r.stderr)
	}
	id := regexp.MustCompile(`command-\d+`).FindString(r.stderr)
	c.ended("cmd", id)
	return id
}

// setAllocation sets when a task's allocation ran and on how many slots,
// to usage the test can add up.
func (c *cli) setAllocation(taskID string, slots int, start, end time.Time) {
	c.t.Helper()
	conn, err := pgx.Connect(c.t.Context(), c.m.DatabaseURL)
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close(c.t.Context())
	tag, err := conn.Exec(c.t.Context(), "UPDATE allocations SET slots = $2, started_at = $3, ended_at = $4 WHERE task_id = $1", taskID, slots, start, end)
	if err != nil || tag.RowsAffected() != 1 {
		c.t.Fatalf("set the allocation of %s: %v (%d rows)", taskID, err, tag.RowsAffected())
	}
}

// TestResourcesAggregatedAndAllocationsAddUpSlotTimeByUserPoolAndWorkspace:
// an allocation counts its slots times the part of its run in each day,
// for its owner, pool and workspace; by month the days add up; the
// totals come as a table, CSV or JSON.
func TestResourcesAggregatedAndAllocationsAddUpSlotTimeByUserPoolAndWorkspace(t *testing.T) {
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	c.ok("", "user", "create", "ann", "--password", "s3cret-pw")
	mine := c.runCommand("true")
	c.ok("s3cret-pw\n", "user", "login", "ann")
	hers := c.runCommand("true")

	day := func(s string) time.Time { d, _ := time.Parse(time.RFC3339, s); return d }
	c.setAllocation(mine, 2, day("2026-03-01T10:00:00Z"), day("2026-03-01T12:00:00Z")) // 4 slot-hours on the 1st
	c.setAllocation(hers, 1, day("2026-03-01T23:00:00Z"), day("2026-03-02T01:00:00Z")) // 1 on the 1st, 1 on the 2nd

	var daily resolute.AllocationAggregatedResponse
	if err := json.Unmarshal([]byte(c.ok("", "resources", "aggregated", "2026-03-01", "2026-03-03", "--json")), &daily); err != nil {
		t.Fatal(err)
	}
	h := 3600.0
	want := []resolute.AllocationAggregate{
		{PeriodStart: "2026-03-01", Period: resolute.PeriodDaily, Seconds: 5 * h, ByUsername: map[string]float64{"admin": 4 * h, "ann": h},
			ByResourcePool: map[string]float64{"default": 5 * h}, ByWorkspace: map[string]float64{resolute.DefaultWorkspaceName: 5 * h}},
		{PeriodStart: "2026-03-02", Period: resolute.PeriodDaily, Seconds: h, ByUsername: map[string]float64{"ann": h},
			ByResourcePool: map[string]float64{"default": h}, ByWorkspace: map[string]float64{resolute.DefaultWorkspaceName: h}},
		{PeriodStart: "2026-03-03", Period: resolute.PeriodDaily, ByUsername: map[string]float64{},
			ByResourcePool: map[string]float64{}, ByWorkspace: map[string]float64{}},
	}
	if diff := cmp.Diff(want, daily.ResourceEntries); diff != "" {
		t.Errorf("daily (-want +got):\n%s", diff)
	}
	out := c.ok("", "res", "agg", "2026-03-02", "2026-03-05", "--monthly")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) < 2 || rows[1][0] != "2026-03-01" || rows[1][2] != "total" || rows[1][4] != "21600.000" {
		t.Errorf("det resources aggregated --monthly (a month of 6 slot-hours):\n%s", out)
	}

	rows, err = csv.NewReader(strings.NewReader(c.ok("", "resources", "allocations", "--start", "2026-03-01", "--end", "2026-03-02", "--csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	wantRows := [][]string{{"Group", "Name", "Slot-Hours"}, {"user", "admin", "4.00"}, {"user", "ann", "2.00"},
		{"resource_pool", "default", "6.00"}, {"workspace", resolute.DefaultWorkspaceName, "6.00"}}
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("det resources allocations --csv (-want +got):\n%s", diff)
	}
	if out := c.ok("", "resources", "allocations", "--start", "2026-03-02", "--end", "2026-03-02"); !strings.Contains(out, "Slot-hours from 2026-03-02 to 2026-03-02") ||
		!strings.Contains(out, "ann") || strings.Contains(out, "admin") {
		t.Errorf("one day's table:\n%s", out)
	}
	// Moved later to another workspace and pool, the usage stays with those
	// it ran in.
	c.ok("", "user", "login", "admin")
	c.ok("", "workspace", "create", "elsewhere")
	c.ok("", "project", "create", "elsewhere", "moved")
	conn, err := pgx.Connect(t.Context(), c.m.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	if _, err := conn.Exec(t.Context(), `UPDATE tasks SET resource_pool = 'later', project_id = (SELECT id FROM projects WHERE name = 'moved')
		WHERE id = $1`, mine); err != nil {
		t.Fatal(err)
	}
	after, err := csv.NewReader(strings.NewReader(c.ok("", "resources", "allocations", "--start", "2026-03-01", "--end", "2026-03-02", "--csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantRows, after); diff != "" {
		t.Errorf("after the task moved (-want +got):\n%s", diff)
	}
	if r := c.run("", "resources", "allocations", "--start", "March"); r.code != 1 || !strings.Contains(r.stderr, "start_date: expected a date") {
		t.Errorf("a start that is not a date: exit %d %s", r.code, r.stderr)
	}
}
