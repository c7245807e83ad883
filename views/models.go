// Package views holds the templ components of every page. Components take
// view models built by handlers; they never touch the database, pgx or
// net/http, so each page can be rendered and tested from plain values.
package views

import "github.com/resolute-ml/resolute"

// Shell is what every page of the signed-in UI needs besides its content.
type Shell struct {
	Title string
	Nav   string // the navigation item to mark as current, e.g. "workspaces"
	// Crumbs are the links above the page to the pages it is part of
	// (Experiments › Experiment 7); nil: the navigation item's page.
	Crumbs []Crumb
	// Here is the breadcrumbs' last, unlinked part; "" for Title.
	Here  string
	User  resolute.User
	Flash *Flash
	// NoAdminPassword shows the banner warning that admin has no password.
	NoAdminPassword bool
	Asset           func(name string) string
	HTMX            bool // the htmx library is embedded (after `make web`)
	Version         string
	// LiveSince is how far the change notifications had come before the
	// page read its data; its stream of changes starts from there.
	LiveSince uint64
	// ClusterMessage is the cluster-wide message administrators set (det
	// master cluster-message set), shown on every page while it is active;
	// "" for none.
	ClusterMessage string
}

// Crumb is one link of a page's breadcrumbs.
type Crumb struct {
	Label, Href string
}

// crumbs are the links the breadcrumbs show before the page's own title:
// s.Crumbs, or the page's navigation item when the page is not that item's
// own page.
func (s Shell) crumbs() []Crumb {
	if s.Crumbs != nil {
		return s.Crumbs
	}
	for _, n := range Nav {
		if n.Key == s.Nav && n.Label != s.Title {
			return []Crumb{{n.Label, n.Href}}
		}
	}
	return nil
}

// Flash is a one-time message shown at the top of the next page.
type Flash struct {
	Kind    string // ok or error
	Message string
}

// NavItem is one entry of the navigation.
type NavItem struct {
	Key, Label, Href string
}

// Nav lists the navigation, in order.
var Nav = []NavItem{
	{"dashboard", "Dashboard", "/dashboard"},
	{"experiments", "Experiments", "/experiments"},
	{"jobs", "Job Queue", "/jobs"},
	{"models", "Model Registry", "/models"},
	{"tasks", "Tasks", "/tasks"},
	{"cluster", "Cluster", "/cluster"},
	{"workspaces", "Workspaces", "/workspaces"},
	{"templates", "Templates", "/templates"},
	{"admin", "Admin", "/admin/users"},
}

// FormErrors maps form field names to their error messages.
type FormErrors map[string]string

// Login is the login page.
type Login struct {
	Asset    func(name string) string
	Username string
	Redirect string
	Error    string
}

// Dashboard is the home page.
type Dashboard struct {
	Shell      Shell
	Master     MasterInfo
	Workspaces []resolute.Workspace
	Projects   []resolute.Project // most recent first, a few
	Activity   map[int64]Activity // of the projects, by id
	Live       DashboardLive
}

// DashboardLive is the part of the dashboard that follows the cluster: the
// viewer's recent experiments and live tasks, their queued jobs, and how
// full each resource pool is.
type DashboardLive struct {
	User        string          // the viewer
	Experiments []ExperimentRow // the viewer's, newest first, a few
	Tasks       []TaskRow       // the viewer's live tasks
	Queued      []resolute.Job  // the viewer's jobs waiting in a queue
	Pools       []resolute.ResourcePool
}

// MasterInfo describes this master, for the dashboard and cluster pages.
type MasterInfo struct {
	Version         string
	ClusterID       string
	ResourceManager string
	URL             string
}

// ErrorPage is a 404 or other error, inside the shell when signed in.
type ErrorPage struct {
	Shell    Shell
	SignedIn bool
	Status   int
	Message  string
	// Next, when set, is a link (NextLabel) to what the person may do
	// instead.
	Next, NextLabel string
}

// WorkspaceList is the workspaces page.
type WorkspaceList struct {
	Shell        Shell
	Workspaces   []resolute.Workspace
	Activity     map[int64]Activity // by workspace id
	ShowArchived bool
	Form         WorkspaceForm
}

// WorkspaceForm is the create-workspace form with what was typed.
type WorkspaceForm struct {
	Name   string
	Errors FormErrors
}

// WorkspacePage is one workspace and its projects.
type WorkspacePage struct {
	Shell     Shell
	Workspace resolute.Workspace
	Projects  []resolute.Project
	Activity  map[int64]Activity // of the projects, by id
	Browser   ExperimentBrowser  // the workspace's experiments
	Form      ProjectForm
	Rename    WorkspaceForm
}

// ProjectForm is the create- or edit-project form with what was typed.
type ProjectForm struct {
	Name        string
	Description string
	Errors      FormErrors
}

// ProjectPage is one project.
type ProjectPage struct {
	Shell    Shell
	Project  resolute.Project
	Activity Activity
	Browser  ExperimentBrowser // the project's experiments
	Form     ProjectForm
}

// UserList is the admin page of users.
type UserList struct {
	Shell Shell
	Users []resolute.User
	Form  UserForm
}

// UserForm is the create-user form with what was typed.
type UserForm struct {
	Username    string
	DisplayName string
	Admin       bool
	Errors      FormErrors
}

// UserPage is the admin page of one user.
type UserPage struct {
	Shell  Shell
	Target resolute.User
	Errors FormErrors
	// Agent is the agent user form's fields: the link, or what was typed.
	Agent AgentUserForm
	// RunsAs is what the user's tasks run as now: the link, or the
	// default ids.
	RunsAs resolute.TaskUser
}

// AgentUserForm is the Unix user and group an administrator links a user
// to, as typed; all empty means no link.
type AgentUserForm struct {
	UID, GID, User, Group string
}

// Account is the signed-in user's own page.
type Account struct {
	Shell  Shell
	Errors FormErrors
}

// LogLine is one master log line for the logs page.
type LogLine struct {
	ID      int64
	Time    string
	Level   string
	Message string
}

// Logs is the admin page of master logs, under a level ("this level and
// above") and text filter.
type Logs struct {
	Shell  Shell
	Lines  []LogLine
	After  int64 // the last line's ID, where following continues
	Level  string
	Search string
}

// Cluster is the cluster page.
type Cluster struct {
	Shell  Shell
	Master MasterInfo
	Live   ClusterLive
}

// TemplateList is the templates page.
type TemplateList struct {
	Shell     Shell
	Templates []resolute.Template
	Form      TemplateForm
}

// TemplateForm is the create-template form with what was typed.
type TemplateForm struct {
	Name        string
	YAML        string
	WorkspaceID int64
	Workspaces  []resolute.Workspace
	Errors      FormErrors
}

// TemplatePage shows and edits one template.
type TemplatePage struct {
	Shell    Shell
	Template resolute.Template
	YAML     string // what the editor holds: the stored YAML, or the rejected edit
	Errors   FormErrors
}

// ExperimentForm is the new-experiment form with what was typed.
type ExperimentForm struct {
	Shell     Shell
	YAML      string
	Template  string
	ProjectID int64
	Paused    bool
	Projects  []resolute.Project
	Templates []resolute.Template
	// HadCode says a code archive came with a rejected submission; browsers
	// cannot keep a chosen file, so the form asks for it again.
	HadCode bool
	Errors  FormErrors // yaml, code, template, project_id
}

// CheckpointRow is one checkpoint as tables show it.
type CheckpointRow struct {
	Checkpoint resolute.Checkpoint
	Validation string // the searcher metric's value at its step, or ""
	Size       string
	// Registered names the model version the checkpoint is, e.g.
	// "digits v1"; "" when it is none.
	Registered     string
	RegisteredPath string
}

// MetricsTable is a group's reports: one row per report, one column per metric.
type MetricsTable struct {
	Group   string
	Columns []string
	Rows    []MetricsRow
}

// MetricsRow is one report in a MetricsTable.
type MetricsRow struct {
	Steps  int64
	Time   string
	Values []string // in the table's column order; "" where not reported
}

// TrialLogs is a trial's log with its filter, followed while it runs.
type TrialLogs struct {
	TrialID int64
	Lines   []LogLine
	After   int64  // the last line's id, where following continues
	Level   string // "" for every level
	Search  string
	Done    bool   // the trial ended and every line is shown: stop following
	Action  string // the page the filter form reloads
}

// JobQueue is the Job Queue page.
type JobQueue struct {
	Shell Shell
	Live  JobQueueLive
}

// JobQueueLive is the part of the Job Queue page that follows the queue:
// one table per pool, replaced when the queue changes.
type JobQueueLive struct {
	// Version identifies the queue shown; the events stream sends the
	// current one, and the page reloads the tables when they differ.
	Version string
	Pools   []JobPool
	// PoolNames lists every pool, for moving a job to another; the pool
	// select appears only when there is more than one.
	PoolNames []string
	// Draggable says SortableJS is embedded (after `make web`), so rows
	// get a drag handle.
	Draggable bool
}

// JobPool is one pool's queue.
type JobPool struct {
	Name          string
	SchedulerType string // priority, fair_share or round_robin
	// Order says in words which way the queue runs, e.g. "lower number runs
	// first (1 is the highest priority)".
	Order      string
	SlotsUsed  int
	SlotsTotal int
	Jobs       []JobRow
}

// JobRow is one job in its pool's queue.
type JobRow struct {
	Job      resolute.Job
	Position int    // 1-based, in the pool's queue
	Prev     string // the job id just ahead in the pool, "" for the first
	Next     string // the job id just behind, "" for the last
	// CanChange says the viewer may change it: its owner or an administrator.
	CanChange bool
}

// ClusterLive is the part of the cluster page that follows the slots.
type ClusterLive struct {
	Pools []ClusterPool
	// Disabled are the agents an administrator disabled (det agent
	// disable), by id.
	Disabled []resolute.AgentState
	// DisabledSlots are the slots an administrator disabled (det slot
	// disable), by agent and slot.
	DisabledSlots []resolute.SlotState
}

// topics are the queues of the pools shown.
func (l ClusterLive) topics() []string {
	out := make([]string, len(l.Pools))
	for i, p := range l.Pools {
		out[i] = object("queue", p.Pool.Name)
	}
	return out
}

// ClusterPool is one resource pool with its scheduler and slots.
type ClusterPool struct {
	Pool  resolute.ResourcePool
	Order string // which way priorities run, for priority pools
	Slots []ClusterSlot
	// BoundTo are the workspaces the pool is bound to, the only ones that
	// may use it; none: every workspace may.
	BoundTo []string
}

// ClusterSlot is one slot and what holds it.
type ClusterSlot struct {
	Slot    resolute.Slot
	TrialID int64 // the trial whose allocation holds it; 0 when free or not a trial
}

// ModelSorts are the orders the Model Registry offers: value, label.
var ModelSorts = [][2]string{{"", "Newest"}, {"name", "Name"}, {"updated", "Last updated"}, {"versions", "Most versions"}}

// ModelList is the Model Registry page (GET /models): a filter in the
// query string, the models, and a form to create one.
type ModelList struct {
	Shell    Shell
	Models   []resolute.Model
	Search   string // in names and descriptions
	Label    string // only models with this label
	Sort     string // one of ModelSorts
	Archived bool   // archived models are shown too
	Labels   []string
	Form     ModelForm
}

// ModelForm is the create-model form with what was typed.
type ModelForm struct {
	Name        string
	Description string
	Labels      string // comma-separated
	Errors      FormErrors
}

// ModelPage is one model (GET /models/{name}): its fields, each editable
// in place, its versions and its aliases.
type ModelPage struct {
	Shell     Shell
	Model     resolute.Model
	Metadata  string // the model's metadata as indented JSON
	Versions  []ModelVersionRow
	CanChange bool // the viewer owns it or is an administrator
	Edit      ModelEdit
	Alias     AliasForm
}

// ModelEdit is what the model's edit forms hold: the stored values, or a
// rejected edit with its errors.
type ModelEdit struct {
	Description string
	Labels      string // comma-separated
	Notes       string
	Metadata    string // JSON
	Open        string // the field whose form stays open: the rejected one
	Errors      FormErrors
}

// AliasForm points an alias at a version.
type AliasForm struct {
	Alias   string
	Version int
	Errors  FormErrors // alias, version
}

// ModelVersionRow is one version as the model page lists it.
type ModelVersionRow struct {
	Version resolute.ModelVersion
	Metric  string // the searcher metric of its experiment
	Value   string // the metric at the checkpoint's step, or ""
}

// ModelVersionPage is one version (GET /models/{name}/versions/{num}).
type ModelVersionPage struct {
	Shell     Shell
	Model     resolute.Model
	Version   resolute.ModelVersion
	Metric    string      // the searcher metric of its experiment
	Metrics   [][2]string // the validation metrics at the checkpoint's step: name, value
	History   MetricsTable
	CanChange bool
	Edit      VersionEdit
}

// VersionEdit is the version's edit form: the stored values, or a rejected
// edit with its errors.
type VersionEdit struct {
	Name     string
	Comment  string
	Notes    string
	Metadata string // JSON
	Errors   FormErrors
}

// RegisterChoices is what checkpoint tables need for their Register form:
// the models the viewer may add versions to.
type RegisterChoices struct {
	Models []string
}

// RegisterPage registers one checkpoint as a model version
// (GET /models/register?checkpoint=UUID); a rejected registration from a
// checkpoint table comes back here with its errors.
type RegisterPage struct {
	Shell      Shell
	Checkpoint resolute.Checkpoint
	Models     []string
	Form       RegisterForm
}

// RegisterForm is the register form with what was chosen or typed.
type RegisterForm struct {
	CheckpointUUID string
	Model          string // an existing model
	NewModel       string // a model to create
	Errors         FormErrors
}

// APIDocs is the page of the REST API's OpenAPI document (/docs/api).
type APIDocs struct {
	Asset       func(name string) string
	Version     string
	Description string
	Groups      []APIGroup
	Schemas     []APISchema
}

// APIGroup is the operations under one first path segment.
type APIGroup struct {
	Name       string
	Operations []APIOperation
}

// APIOperation is one method of one path.
type APIOperation struct {
	ID, Method, Path, Summary string
	Auth                      string // anyone, user, administrator, task or user
	Request                   string // the body's schema in a few words; "" for none
	Responses                 []APIResponse
}

// APIResponse is one status of an operation and its body.
type APIResponse struct {
	Status, Body string
}

// APISchema is one named type of the bodies.
type APISchema struct {
	Name   string
	Fields []APIField
}

// APIField is one JSON field of a schema.
type APIField struct {
	Name, Type string
	Required   bool
}
