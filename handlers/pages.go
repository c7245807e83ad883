package handlers

import (
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/scheduler"
	"github.com/resolute-ml/resolute/views"
)

// handleDashboard serves GET /dashboard.
func (s *Server) handleDashboard(w http.ResponseWriter, r *http.Request) {
	notArchived := false
	workspaces, err := s.db.WorkspacesFor(r.Context(), &notArchived, viewer(r, authz.ViewWorkspace))
	if err != nil {
		s.error(w, r, err)
		return
	}
	projects, err := s.db.Projects(r.Context(), db.ProjectFilter{Archived: &notArchived, Viewer: viewer(r, authz.ViewProject)})
	if err != nil {
		s.error(w, r, err)
		return
	}
	sort.Slice(projects, func(i, j int) bool { return projects[i].CreatedAt.After(projects[j].CreatedAt) })
	if len(projects) > 10 {
		projects = projects[:10]
	}
	activity, err := s.projectActivity(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	live, err := s.dashboardLive(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.page(w, r, views.DashboardPage(views.Dashboard{Shell: s.shell(r, "Dashboard", "dashboard"),
		Master: s.masterView(), Workspaces: workspaces, Projects: projects, Activity: activity, Live: live}))
}

// handleDashboardLive serves GET /dashboard/live: the htmx fragment of the
// viewer's experiments, tasks and queued jobs and the pools' usage, fetched
// again on each pushed change (GET /events).
func (s *Server) handleDashboardLive(w http.ResponseWriter, r *http.Request) {
	live, err := s.dashboardLive(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, views.DashboardLiveView(live))
}

// dashboardRecent is how many of the viewer's experiments the dashboard
// shows.
const dashboardRecent = 8

func (s *Server) dashboardLive(r *http.Request) (views.DashboardLive, error) {
	me, _ := userFrom(r)
	l := views.DashboardLive{User: me.Username, Pools: s.queue.ResourcePools()}
	mine, _, err := s.db.ExperimentPage(r.Context(), db.ExperimentListFilter{Username: me.Username, Archived: new(false),
		Sort: "id", Descending: true, Limit: dashboardRecent, Viewer: viewer(r, authz.ViewExperiment)})
	if err != nil {
		return l, err
	}
	for _, e := range mine {
		l.Experiments = append(l.Experiments, s.experimentRow(e))
	}
	tasks, err := s.db.Tasks(r.Context(), db.TaskFilter{Live: new(true), Viewer: viewer(r, authz.ViewNSC)})
	if err != nil {
		return l, err
	}
	for _, t := range tasks {
		if t.UserID == me.ID {
			l.Tasks = append(l.Tasks, s.taskRow(r, t))
		}
	}
	jobs, err := s.queue.Jobs(r.Context(), "")
	if err != nil {
		return l, err
	}
	for _, j := range jobs {
		if j.Username == me.Username && j.State == "QUEUED" {
			l.Queued = append(l.Queued, j)
		}
	}
	return l, nil
}

// projectActivity is how busy every project is, for views.
func (s *Server) projectActivity(r *http.Request) (map[int64]views.Activity, error) {
	acts, err := s.db.ProjectActivities(r.Context())
	if err != nil {
		return nil, err
	}
	out := make(map[int64]views.Activity, len(acts))
	for id, a := range acts {
		out[id] = views.Activity{Experiments: a.NumExperiments, Active: a.NumActive, Last: a.LastActivity}
	}
	return out, nil
}

// workspaceActivity sums the projects' activity by workspace.
func (s *Server) workspaceActivity(r *http.Request) (map[int64]views.Activity, error) {
	acts, err := s.db.ProjectActivities(r.Context())
	if err != nil {
		return nil, err
	}
	out := map[int64]views.Activity{}
	for _, a := range acts {
		w := out[a.WorkspaceID]
		w.Experiments += a.NumExperiments
		w.Active += a.NumActive
		if a.LastActivity != nil && (w.Last == nil || a.LastActivity.After(*w.Last)) {
			w.Last = a.LastActivity
		}
		out[a.WorkspaceID] = w
	}
	return out, nil
}

func (s *Server) masterView() views.MasterInfo {
	m := s.cfg.Master
	return views.MasterInfo{Version: m.Version, ClusterID: m.ClusterID, ResourceManager: m.ResourceManager, URL: m.URL}
}

// handleCluster serves GET /cluster: the master and each resource pool
// with its scheduler and slots.
func (s *Server) handleCluster(w http.ResponseWriter, r *http.Request) {
	s.page(w, r, views.ClusterPage(views.Cluster{Shell: s.shell(r, "Cluster", "cluster"), Master: s.masterView(), Live: s.clusterLive(r)}))
}

// handleClusterPools serves GET /cluster/pools: the htmx fragment of the
// pools and their slots, fetched again on each pushed change (GET /events).
func (s *Server) handleClusterPools(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, views.ClusterLiveView(s.clusterLive(r)))
}

func (s *Server) clusterLive(r *http.Request) views.ClusterLive {
	// The workspaces each pool is bound to; without them (the database
	// away) the pools still show.
	bound := map[string][]string{}
	if bindings, err := s.svc.WorkspaceSettings.PoolBindings(r.Context(), actorFrom(r), ""); err == nil {
		for _, b := range bindings {
			bound[b.PoolName] = append(bound[b.PoolName], b.WorkspaceName)
		}
	}
	configs := map[string]scheduler.Config{}
	for _, p := range s.queue.Pools() {
		configs[p.Name] = p.Scheduler
	}
	var l views.ClusterLive
	pools, err := s.queue.ResourcePoolsFor(r.Context(), actorFrom(r)) // on error, every held slot hidden
	if err != nil {
		s.logger.Warn("cluster page: slots' holders", "err", err)
	}
	for _, p := range pools {
		cp := views.ClusterPool{Pool: p, Order: priorityOrder(configs[p.Name]), BoundTo: bound[p.Name]}
		for _, sl := range p.Slots {
			cp.Slots = append(cp.Slots, views.ClusterSlot{Slot: sl, TrialID: trialOfID(sl.AllocationID)})
		}
		l.Pools = append(l.Pools, cp)
	}
	if states, err := s.db.AgentStates(r.Context()); err == nil {
		for _, id := range slices.Sorted(maps.Keys(states)) {
			l.Disabled = append(l.Disabled, states[id])
		}
	}
	if states, err := s.db.SlotStates(r.Context()); err == nil {
		for _, id := range slices.Sorted(maps.Keys(states)) {
			for _, slot := range slices.Sorted(maps.Keys(states[id])) {
				l.DisabledSlots = append(l.DisabledSlots, states[id][slot])
			}
		}
	}
	return l
}

// priorityOrder says which way a priority pool's numbers run.
func priorityOrder(c scheduler.Config) string {
	if c.HigherFirst {
		return "higher number runs first"
	}
	return "lower number runs first"
}

// trialOfID reads the trial of a task id ("trial-12") or an allocation id
// ("trial-12.3", its third run); 0 for anything else.
func trialOfID(id string) int64 {
	rest, ok := strings.CutPrefix(id, "trial-")
	if !ok {
		return 0
	}
	rest, _, _ = strings.Cut(rest, ".")
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// handleFavicon serves GET /favicon.ico with the SVG icon.
func (s *Server) handleFavicon(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, s.assets.URL("favicon.svg"), http.StatusMovedPermanently)
}
