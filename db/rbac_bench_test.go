package db_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/db/dbtest"
)

// seedRBAC fills a database with 10,000 experiments in 100 workspaces (100
// each) and 50 other users holding 2,000 roles among them; the returned
// user holds Viewer in 10 workspaces, 5 of their own and 5 through a group
// (1,000 experiments). It returns the database and the user's id.
func seedRBAC(tb testing.TB) (*db.DB, int64) {
	tb.Helper()
	ctx := context.Background()
	url := dbtest.NewURL(tb)
	d, err := db.Open(ctx, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(d.Close)
	if err := d.Bootstrap(ctx, ""); err != nil {
		tb.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		`INSERT INTO users (username) SELECT 'u' || g FROM generate_series(1, 51) g`,
		`INSERT INTO workspaces (name, user_id) SELECT 'w' || g, (SELECT min(id) FROM users) FROM generate_series(1, 100) g`,
		`INSERT INTO projects (name, workspace_id, user_id) SELECT 'p', w.id, w.user_id FROM workspaces w WHERE w.name LIKE 'w%'`,
		`INSERT INTO experiments (project_id, user_id, name, state, config, original_config, searcher_state, seed, resource_pool)
		 SELECT p.id, (SELECT min(id) FROM users), 'e' || g, 'COMPLETED', '{}', '', '{}', g, 'default'
		 FROM projects p JOIN workspaces w ON w.id = p.workspace_id, generate_series(1, 100) g WHERE w.name LIKE 'w%'`,
		// The others' roles: 40 each, spread over the workspaces.
		`INSERT INTO role_assignments (role, user_id, workspace_id)
		 SELECT (ARRAY['Viewer','Editor','EditorRestricted','WorkspaceAdmin'])[1 + (u.n + g) % 4], u.id, w.id
		 FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM users WHERE username LIKE 'u%' AND username <> 'u1') u,
		      generate_series(1, 40) g
		 JOIN LATERAL (SELECT id FROM workspaces WHERE name = 'w' || (1 + (g * 7) % 100)) w ON true`,
		// u1: Viewer in w1..w5 directly, and in w6..w10 through group g1,
		// among 20 groups of 10 members each.
		`INSERT INTO role_assignments (role, user_id, workspace_id)
		 SELECT 'Viewer', (SELECT id FROM users WHERE username = 'u1'), id FROM workspaces WHERE name IN ('w1','w2','w3','w4','w5')`,
		`INSERT INTO user_groups (name) SELECT 'g' || g FROM generate_series(1, 20) g`,
		`INSERT INTO user_group_members (group_id, user_id)
		 SELECT g.id, u.id FROM user_groups g JOIN users u ON u.username LIKE 'u%'
		 WHERE (hashtext(g.name || u.username) % 5 = 0 OR (g.name = 'g1' AND u.username = 'u1'))`,
		`INSERT INTO role_assignments (role, group_id, workspace_id)
		 SELECT 'Viewer', (SELECT id FROM user_groups WHERE name = 'g1'), id FROM workspaces WHERE name IN ('w6','w7','w8','w9','w10')`,
		`ANALYZE`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			tb.Fatalf("%v\n%s", err, q)
		}
	}
	var uid int64
	if err := conn.QueryRow(ctx, `SELECT id FROM users WHERE username = 'u1'`).Scan(&uid); err != nil {
		tb.Fatal(err)
	}
	return d, uid
}

// TestTheExperimentListShowsOnlyWorkspacesWithARole checks the filter the
// benchmark times: exactly the 1,000 experiments of the user's 10
// workspaces, their own roles and their group's.
func TestTheExperimentListShowsOnlyWorkspacesWithARole(t *testing.T) {
	d, uid := seedRBAC(t)
	v := db.Viewer{Filtered: true, UserID: uid, Roles: authz.RolesGranting(authz.ViewExperiment)}
	list, total, err := d.ExperimentPage(context.Background(), db.ExperimentListFilter{Viewer: v, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if total != 1000 || len(list) != 1000 {
		t.Fatalf("%d listed of %d, want 1000", len(list), total)
	}
	for _, e := range list {
		if !slices.Contains([]string{"w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9", "w10"}, e.WorkspaceName) {
			t.Fatalf("experiment %d of workspace %s listed", e.ID, e.WorkspaceName)
		}
	}
	// A role that does not read experiments shows none.
	v.Roles = authz.RolesGranting(authz.CreateWorkspaces)
	if _, total, _ := d.ExperimentPage(context.Background(), db.ExperimentListFilter{Viewer: v}); total != 0 {
		t.Errorf("%d experiments through roles that do not read them", total)
	}
	// Unfiltered, all 10,000.
	if _, total, _ := d.ExperimentPage(context.Background(), db.ExperimentListFilter{}); total != 10000 {
		t.Errorf("unfiltered: %d", total)
	}
}

// BenchmarkExperimentListUnderRBAC times one page of the experiment list
// (50 rows and the count) at 10,000 experiments for a user who sees 1,000
// of them through roles (their own and a group's), in each of its usual
// orders, and prints the p50 and p95 (the figure: p95 < 50 ms); the same
// pages unfiltered, as under basic authorization, for comparison.
func BenchmarkExperimentListUnderRBAC(b *testing.B) {
	d, uid := seedRBAC(b)
	filtered := db.Viewer{Filtered: true, UserID: uid, Roles: authz.RolesGranting(authz.ViewExperiment)}
	for _, bc := range []struct {
		name  string
		v     db.Viewer
		total int
	}{{"sees 1000 through roles", filtered, 1000}, {"unfiltered", db.Viewer{}, 10000}} {
		b.Run(bc.name, func(b *testing.B) {
			sorts := []string{"id", "name", "start", "state", "user"}
			ctx := context.Background()
			lat := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				start := time.Now()
				_, total, err := d.ExperimentPage(ctx, db.ExperimentListFilter{Viewer: bc.v, Sort: sorts[i%len(sorts)],
					Descending: i%2 == 0, Limit: 50, Offset: 50 * (i % 3)})
				lat = append(lat, time.Since(start))
				if err != nil || total != bc.total {
					b.Fatalf("total %d, err %v", total, err)
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}
