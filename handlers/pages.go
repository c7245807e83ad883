package handlers

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/scheduler"
	"github.com/resolute-ml/resolute/views"
)

// handleDashboard serves GET /dashboard.
func (s *Server) handleDashboard(w http.ResponseWriter, r *http.Request) {
	notArchived := false
	workspaces, err := s.db.Workspaces(r.Context(), &notArchived)
	if err != nil {
		s.error(w, r, err)
		return
	}
	projects, err := s.db.Projects(r.Context(), db.ProjectFilter{Archived: &notArchived})
	if err != nil {
		s.error(w, r, err)
		return
	}
	sort.Slice(projects, func(i, j int) bool { return projects[i].CreatedAt.After(projects[j].CreatedAt) })
	if len(projects) > 10 {
		projects = projects[:10]
	}
	s.page(w, r, views.DashboardPage(views.Dashboard{Shell: s.shell(r, "Dashboard", "dashboard"),
		Master: s.masterView(), Workspaces: workspaces, Projects: projects}))
}

func (s *Server) masterView() views.MasterInfo {
	m := s.cfg.Master
	return views.MasterInfo{Version: m.Version, ClusterID: m.ClusterID, ResourceManager: m.ResourceManager, URL: m.URL}
}

// coming describes the sections that are not built yet; every section is
// built now, but the page stays for the next one.
var coming = map[string]views.Coming{}

// handleComing serves the sections not built yet.
func (s *Server) handleComing(key string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := coming[key]
		c.Shell = s.shell(r, c.What, key)
		s.page(w, r, views.ComingPage(c))
	}
}

// handleCluster serves GET /cluster: the master and each resource pool
// with its scheduler and slots.
func (s *Server) handleCluster(w http.ResponseWriter, r *http.Request) {
	s.page(w, r, views.ClusterPage(views.Cluster{Shell: s.shell(r, "Cluster", "cluster"), Master: s.masterView(), Live: s.clusterLive()}))
}

// handleClusterPools serves GET /cluster/pools: the htmx fragment of the
// pools and their slots, polled every 3 s.
func (s *Server) handleClusterPools(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, views.ClusterLiveView(s.clusterLive()))
}

func (s *Server) clusterLive() views.ClusterLive {
	configs := map[string]scheduler.Config{}
	for _, p := range s.exps.Pools() {
		configs[p.Name] = p.Scheduler
	}
	var l views.ClusterLive
	for _, p := range s.exps.ResourcePools() {
		cp := views.ClusterPool{Pool: p, Order: priorityOrder(configs[p.Name])}
		for _, sl := range p.Slots {
			cp.Slots = append(cp.Slots, views.ClusterSlot{Slot: sl, TrialID: trialOfAllocation(sl.AllocationID)})
		}
		l.Pools = append(l.Pools, cp)
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

// trialOfAllocation reads the trial of an allocation id, "trial-12.3"
// (trial 12, its third run); 0 for anything else.
func trialOfAllocation(id string) int64 {
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
