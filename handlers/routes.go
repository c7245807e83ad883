package handlers

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// Routes lists the whole HTTP surface. Groups are by who may call them.
func (s *Server) Routes() chi.Router {
	r := chi.NewRouter()
	r.Use(s.recoverPanics, s.limitBodies, s.refuseNUL, s.authenticate)
	r.NotFound(s.handleNotFound)
	r.MethodNotAllowed(s.handleMethodNotAllowed)

	// Anyone.
	r.Get("/health", s.handleHealth)
	r.Get("/info", s.handleInfo)
	r.Handle("/static/*", s.assets)
	r.Get("/favicon.ico", s.handleFavicon)
	r.Get("/proxy/*", s.handleOldProxyLink) // tasks are served on the task origin (TaskRoutes)
	r.Get("/login", s.handleLoginPage)
	r.Post("/login", s.handleLoginForm)
	r.Get(PythonPath, s.handlePythonIndex)          // the Python package, for pip
	r.Get(PythonPath+"{file}", s.handlePythonWheel) // (code, not data: no session)

	// A shell's terminal: a websocket from the master's own pages, 401
	// rather than the login page.
	r.With(s.requireAPIUser).Get("/tasks/{id}/terminal/ws", s.handleTerminalSocket)

	// Signed-in pages.
	r.Group(func(r chi.Router) {
		r.Use(s.requirePageUser, s.noteLiveSeq)
		r.Get("/", s.handleRoot)
		r.Post("/logout", s.handleLogoutForm)
		r.Get("/events", s.handleEvents)
		r.Get("/dashboard", s.handleDashboard)
		r.Get("/dashboard/live", s.handleDashboardLive)
		r.Get("/experiments", s.handleExperimentListPage)
		r.Get("/experiments/table", s.handleExperimentTable)
		r.Post("/experiments/batch", s.handleExperimentBatchForm)
		r.Get("/experiments/new", s.handleExperimentNewPage)
		r.Post("/experiments/new", s.handleExperimentCreateForm)
		r.Post("/experiments/new/validate", s.handleExperimentValidateForm)
		r.Get("/experiments/{id}", s.handleExperimentPage)
		r.Get("/experiments/{id}/live", s.handleExperimentLive)
		r.Post("/experiments/{id}/activate", s.handleExperimentActionForm("activate"))
		r.Post("/experiments/{id}/pause", s.handleExperimentActionForm("pause"))
		r.Post("/experiments/{id}/cancel", s.handleExperimentActionForm("cancel"))
		r.Post("/experiments/{id}/kill", s.handleExperimentActionForm("kill"))
		r.Post("/experiments/{id}/archive", s.handleExperimentArchiveForm(true))
		r.Post("/experiments/{id}/unarchive", s.handleExperimentArchiveForm(false))
		r.Post("/experiments/{id}/delete", s.handleExperimentDeleteForm)
		r.Post("/experiments/{id}/tensorboard", s.handleExperimentTensorBoardForm)
		r.Post("/experiments/{id}/notes", s.handleExperimentNotesForm)
		r.Post("/experiments/{id}/labels/add", s.handleExperimentLabelForm(true))
		r.Post("/experiments/{id}/labels/remove", s.handleExperimentLabelForm(false))
		r.Post("/experiments/{id}/scheduling", s.handleExperimentSchedulingForm)
		r.Post("/experiments/{id}/fork", s.handleExperimentForkForm)
		r.Get("/experiments/{id}/logs/lines", s.handleExperimentLogLines)
		r.Get("/experiments/{id}/logs/download", s.handleExperimentLogDownload)
		r.Get("/experiments/{id}/metrics.csv", s.handleExperimentMetricsCSV)
		r.Get("/compare", s.handleComparePage)
		r.Post("/compare/tensorboard", s.handleCompareTensorBoardForm)
		r.Get("/trials/{id}", s.handleTrialPage)
		r.Get("/trials/{id}/live", s.handleTrialLive)
		r.Get("/trials/{id}/logs/lines", s.handleTrialLogLines)
		r.Get("/trials/{id}/logs/download", s.handleTrialLogDownload)
		r.Get("/trials/{id}/metrics.csv", s.handleTrialMetricsCSV)
		r.Get("/jobs", s.handleJobQueuePage)
		r.Get("/jobs/table", s.handleJobQueueTable)
		r.Get("/jobs/events", s.handleJobEvents)
		r.Post("/jobs/move", s.handleJobMoveForm)
		r.Post("/jobs/update", s.handleJobUpdateForm)
		r.Get("/models", s.handleModelListPage)
		r.Post("/models", s.handleModelCreateForm)
		r.Get("/models/register", s.handleRegisterPage)
		r.Post("/models/register", s.handleModelRegisterForm)
		r.Get("/models/{name}", s.handleModelPage)
		r.Post("/models/{name}/edit", s.handleModelEditForm)
		r.Post("/models/{name}/aliases", s.handleModelAliasForm)
		r.Post("/models/{name}/aliases/{alias}/delete", s.handleModelAliasDeleteForm)
		r.Post("/models/{name}/archive", s.handleModelArchiveForm(true))
		r.Post("/models/{name}/unarchive", s.handleModelArchiveForm(false))
		r.Post("/models/{name}/delete", s.handleModelDeleteForm)
		r.Get("/models/{name}/versions/{num}", s.handleModelVersionPage)
		r.Post("/models/{name}/versions/{num}/edit", s.handleModelVersionEditForm)
		r.Post("/models/{name}/versions/{num}/delete", s.handleModelVersionDeleteForm)
		r.Get("/tasks", s.handleTaskListPage)
		r.Get("/tasks/table", s.handleTaskTable)
		r.Post("/tasks/launch-notebook", s.handleTaskLaunchNotebookForm)
		r.Post("/tasks/launch-shell", s.handleTaskLaunchShellForm)
		r.Post("/tasks/run-command", s.handleTaskRunCommandForm)
		r.Get("/tasks/{id}", s.handleTaskPage)
		r.Get("/tasks/{id}/live", s.handleTaskLive)
		r.Get("/tasks/{id}/logs/lines", s.handleTaskLogLines)
		r.Post("/tasks/{id}/kill", s.handleTaskKillForm)
		r.Get("/tasks/{id}/terminal", s.handleTerminalPage)
		r.Get("/tasks/{id}/open", s.handleTaskOpen)
		r.Get("/cluster", s.handleCluster)
		r.Get("/cluster/pools", s.handleClusterPools)

		r.Get("/workspaces", s.handleWorkspaceListPage)
		r.Post("/workspaces", s.handleWorkspaceCreateForm)
		r.Get("/workspaces/{id}", s.handleWorkspacePage)
		r.Post("/workspaces/{id}/rename", s.handleWorkspaceRenameForm)
		r.Post("/workspaces/{id}/archive", s.handleWorkspaceArchiveForm(true))
		r.Post("/workspaces/{id}/unarchive", s.handleWorkspaceArchiveForm(false))
		r.Post("/workspaces/{id}/delete", s.handleWorkspaceDeleteForm)
		r.Post("/workspaces/{id}/projects", s.handleProjectCreateForm)
		r.Get("/projects/{id}", s.handleProjectPage)
		r.Post("/projects/{id}", s.handleProjectEditForm)
		r.Post("/projects/{id}/archive", s.handleProjectArchiveForm(true))
		r.Post("/projects/{id}/unarchive", s.handleProjectArchiveForm(false))
		r.Post("/projects/{id}/delete", s.handleProjectDeleteForm)

		r.Get("/templates", s.handleTemplateListPage)
		r.Post("/templates", s.handleTemplateCreateForm)
		r.Get("/templates/{name}", s.handleTemplatePage)
		r.Post("/templates/{name}", s.handleTemplateEditForm)
		r.Post("/templates/{name}/delete", s.handleTemplateDeleteForm)

		r.Get("/account", s.handleAccountPage)
		r.Post("/account/password", s.handleAccountPasswordForm)

		// Administrators only.
		r.Group(func(r chi.Router) {
			r.Use(s.requireAdmin)
			r.Get("/admin/users", s.handleUserListPage)
			r.Post("/admin/users", s.handleUserCreateForm)
			r.Get("/admin/users/{id}", s.handleUserEditPage)
			r.Post("/admin/users/{id}", s.handleUserEditForm)
			r.Post("/admin/users/{id}/password", s.handleUserPasswordForm)
			r.Post("/admin/users/{id}/agent-user", s.handleUserAgentForm)
			r.Get("/logs", s.handleLogsPage)
			r.Get("/logs/lines", s.handleLogLines)
			r.Get("/admin/webhooks", s.handleWebhookListPage)
			r.Post("/admin/webhooks", s.handleWebhookCreateForm)
			r.Get("/admin/webhooks/{id}", s.handleWebhookPage)
			r.Post("/admin/webhooks/{id}/delete", s.handleWebhookDeleteForm)
			r.Post("/admin/webhooks/{id}/test", s.handleWebhookTestForm)
		})
	})

	r.Route("/api/v1", func(r chi.Router) {
		r.Post("/auth/login", s.handleAPILogin) // anyone

		// The task API: a trial's own task (allocation token) or a user.
		r.Group(func(r chi.Router) {
			r.Use(s.requireTaskOrUser)
			r.Post("/trials/{id}/metrics", s.handleTaskMetrics)
			r.Post("/trials/{id}/progress", s.handleTaskProgress)
			r.Post("/trials/{id}/early_exit", s.handleTaskEarlyExit)
			r.Post("/trials/{id}/runner/metadata", s.handleTaskRunnerMetadata)
			r.Get("/trials/{id}", s.handleAPITrialGet)
			r.Get("/runs/{id}/metadata", s.handleRunMetadataGet)
			r.Post("/runs/{id}/metadata", s.handleRunMetadataPost)
			r.Get("/experiments/{id}/searcher/best_searcher_validation_metric", s.handleBestValidation)
			r.Post("/checkpoints", s.handleTaskCheckpoint)
			r.Patch("/checkpoints", s.handleTaskCheckpointPatch)
			r.Get("/checkpoints/{uuid}", s.handleCheckpointGet)
			r.Get("/allocations/{id}/signals/preemption", s.handlePreemptionSignal)
			r.Post("/allocations/{id}/signals/ack_preemption", s.handleAckPreemption)
			r.Post("/allocations/{id}/rendezvous", s.handleRendezvous)
		})

		// Signed-in API.
		r.Group(func(r chi.Router) {
			r.Use(s.requireAPIUser)
			r.Post("/auth/logout", s.handleAPILogout)
			r.Get("/auth/user", s.handleAPIMe)
			r.Get("/me", s.handleAPIMe)
			r.Get("/master", s.handleAPIMaster)

			r.Get("/users", s.handleAPIUserList)
			r.Get("/users/{id}", s.handleAPIUserGet)
			r.Get("/users/{username}/by-username", s.handleAPIUserByName)
			r.Post("/users/{id}/password", s.handleAPIUserPassword)

			r.Get("/workspaces", s.handleAPIWorkspaceList)
			r.Post("/workspaces", s.handleAPIWorkspaceCreate)
			r.Get("/workspaces/{id}", s.handleAPIWorkspaceGet)
			r.Patch("/workspaces/{id}", s.handleAPIWorkspacePatch)
			r.Delete("/workspaces/{id}", s.handleAPIWorkspaceDelete)
			r.Post("/workspaces/{id}/archive", s.handleAPIWorkspaceArchive(true))
			r.Post("/workspaces/{id}/unarchive", s.handleAPIWorkspaceArchive(false))
			r.Get("/workspaces/{id}/projects", s.handleAPIWorkspaceProjects)
			r.Post("/workspaces/{id}/projects", s.handleAPIProjectCreate)

			r.Get("/projects", s.handleAPIProjectList)
			r.Get("/projects/{id}", s.handleAPIProjectGet)
			r.Patch("/projects/{id}", s.handleAPIProjectPatch)
			r.Delete("/projects/{id}", s.handleAPIProjectDelete)
			r.Post("/projects/{id}/archive", s.handleAPIProjectArchive(true))
			r.Post("/projects/{id}/unarchive", s.handleAPIProjectArchive(false))

			r.Get("/templates", s.handleAPITemplateList)
			r.Post("/templates", s.handleAPITemplateCreate)
			r.Get("/templates/{name}", s.handleAPITemplateGet)
			r.Put("/templates/{name}", s.handleAPITemplatePut)
			r.Patch("/templates/{name}", s.handleAPITemplatePatch)
			r.Delete("/templates/{name}", s.handleAPITemplateDelete)

			r.Post("/experiments", s.handleAPIExperimentCreate)
			r.Get("/experiments", s.handleAPIExperimentList)
			r.Get("/experiments/{id}", s.handleAPIExperimentGet)
			r.Patch("/experiments/{id}", s.handleAPIExperimentPatch)
			r.Delete("/experiments/{id}", s.handleAPIExperimentDelete)
			r.Post("/experiments/{id}/activate", s.handleAPIExperimentAction("activate"))
			r.Post("/experiments/{id}/pause", s.handleAPIExperimentAction("pause"))
			r.Post("/experiments/{id}/cancel", s.handleAPIExperimentAction("cancel"))
			r.Post("/experiments/{id}/kill", s.handleAPIExperimentAction("kill"))
			r.Post("/experiments/{id}/archive", s.handleAPIExperimentArchive(true))
			r.Post("/experiments/{id}/unarchive", s.handleAPIExperimentArchive(false))
			r.Post("/experiments/{id}/move", s.handleAPIExperimentMove)
			r.Get("/experiments/{id}/trials", s.handleAPIExperimentTrials)
			r.Get("/experiments/{id}/checkpoints", s.handleAPIExperimentCheckpoints)
			r.Get("/experiments/{id}/metrics", s.handleAPIExperimentMetrics)
			r.Get("/experiments/{id}/config", s.handleAPIExperimentConfig)
			r.Get("/experiments/{id}/model_def", s.handleAPIExperimentModelDef)
			r.Put("/experiments/{id}/retain_logs", s.handleAPIExperimentRetainLogs)
			r.Post("/preview-hp-search", s.handleAPIPreviewSearch)
			r.Get("/job-queues", s.handleAPIJobQueue)
			r.Post("/job-queues", s.handleAPIJobQueueUpdate)
			r.Get("/resource-pools", s.handleAPIResourcePools)
			r.Get("/agents", s.handleAPIAgents)

			for kind := range kinds {
				r.Post("/"+kind, s.handleAPITaskCreate(kind))
				r.Get("/"+kind, s.handleAPITaskList(kind))
				r.Get("/"+kind+"/{id}", s.handleAPITaskGet(kind))
				r.Post("/"+kind+"/{id}/kill", s.handleAPITaskKill(kind))
				r.Post("/"+kind+"/{id}/set_priority", s.handleAPITaskSetPriority(kind))
			}
			r.Get("/tasks", s.handleAPITaskList(""))
			r.Get("/tasks/{id}", s.handleAPITaskGet(""))
			r.Get("/tasks/{id}/logs", s.handleAPITaskLogs)
			r.Post("/tasks/{id}/open", s.handleAPITaskOpen)

			r.Get("/models", s.handleAPIModelList)
			r.Post("/models", s.handleAPIModelCreate)
			r.Get("/models/{name}", s.handleAPIModelGet)
			r.Patch("/models/{name}", s.handleAPIModelPatch)
			r.Delete("/models/{name}", s.handleAPIModelDelete)
			r.Post("/models/{name}/archive", s.handleAPIModelArchive(true))
			r.Post("/models/{name}/unarchive", s.handleAPIModelArchive(false))
			r.Post("/models/{name}/move", s.handleAPIModelMove)
			r.Get("/models/{name}/versions", s.handleAPIModelVersions)
			r.Post("/models/{name}/versions", s.handleAPIModelVersionCreate)
			r.Get("/models/{name}/versions/{num}", s.handleAPIModelVersionGet)
			r.Patch("/models/{name}/versions/{num}", s.handleAPIModelVersionPatch)
			r.Delete("/models/{name}/versions/{num}", s.handleAPIModelVersionDelete)
			r.Get("/models/{name}/versions/{num}/metrics", s.handleAPIModelVersionMetrics)
			r.Put("/models/{name}/aliases/{alias}", s.handleAPIModelAliasSet)
			r.Delete("/models/{name}/aliases/{alias}", s.handleAPIModelAliasDelete)
			r.Get("/trials/{id}/checkpoints", s.handleAPITrialCheckpoints)
			r.Get("/trials/{id}/metrics", s.handleAPITrialMetrics)
			r.Get("/trials/{id}/logs", s.handleAPITrialLogs)
			r.Post("/trials/{id}/kill", s.handleAPITrialKill)
			r.Get("/checkpoints/{uuid}/download", s.handleCheckpointDownload)
			r.Delete("/checkpoints", s.handleAPICheckpointsDelete)

			// Administrators only.
			r.Group(func(r chi.Router) {
				r.Use(s.requireAdmin)
				r.Post("/users", s.handleAPIUserCreate)
				r.Patch("/users/{id}", s.handleAPIUserPatch)
				r.Get("/master/logs", s.handleAPIMasterLogs)
				r.Get("/webhooks", s.handleAPIWebhookList)
				r.Post("/webhooks", s.handleAPIWebhookCreate)
				r.Patch("/webhooks/{id}", s.handleAPIWebhookPatch)
				r.Delete("/webhooks/{id}", s.handleAPIWebhookDelete)
				r.Post("/webhooks/{id}/test", s.handleAPIWebhookTest)
				r.Post("/cleanup_logs", s.handleAPICleanupLogs)
			})
		})
	})
	return r
}

// TaskRoutes lists the task origin's whole HTTP surface: the task proxy
// and the redemption of tickets, on the task's own host where each task
// has one; everything else goes to the master. It knows no master session
// (handlers/proxy.go).
func (s *Server) TaskRoutes() chi.Router {
	r := chi.NewRouter()
	r.Use(s.recoverPanics)
	r.NotFound(s.handleToMaster)
	r.MethodNotAllowed(s.handleToMaster)
	r.Get(redeemPath, s.handleTaskRedeem)
	r.With(s.onTaskHost).Handle("/proxy/*", s.proxy) // on its own host, with the task cookie of that task or the notebook's token
	return r
}

// handleRoot serves GET /: the dashboard.
func (s *Server) handleRoot(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
}
