package handlers

import (
	"net/http"
	"sort"

	"github.com/resolute-ml/resolute/db"
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

// coming describes the sections that are not built yet.
var coming = map[string]views.Coming{
	"jobs":   {What: "Job Queue", About: "The queue of every pool, with drag-to-reorder and priorities, arrives with the scheduler."},
	"models": {What: "Model Registry", About: "Models, versions and aliases built from checkpoints arrive with the model registry."},
	"tasks":  {What: "Tasks", About: "Notebooks, shells, TensorBoards and commands arrive with interactive tasks."},
}

// handleComing serves the sections not built yet: /jobs, /models, /tasks.
func (s *Server) handleComing(key string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := coming[key]
		c.Shell = s.shell(r, c.What, key)
		s.page(w, r, views.ComingPage(c))
	}
}

// handleCluster serves GET /cluster.
func (s *Server) handleCluster(w http.ResponseWriter, r *http.Request) {
	s.page(w, r, views.ClusterPage(views.Cluster{Shell: s.shell(r, "Cluster", "cluster"), Master: s.masterView()}))
}

// handleFavicon serves GET /favicon.ico with the SVG icon.
func (s *Server) handleFavicon(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, s.assets.URL("favicon.svg"), http.StatusMovedPermanently)
}
