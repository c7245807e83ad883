package views

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
)

// ExperimentList is the experiments page (GET /experiments).
type ExperimentList struct {
	Shell   Shell
	Browser ExperimentBrowser
}

// ExperimentBrowser is what every experiment list shows (the experiments
// page, a workspace's, a project's): the filter, the batch actions and the
// live table.
type ExperimentBrowser struct {
	Users    []string           // the user filter's choices
	Labels   []string           // the label filter's choices
	Projects []resolute.Project // where the batch action moves experiments
	Table    ExperimentTable
}

// ExperimentQuery is a list's filter, order and page, as its URL carries it.
type ExperimentQuery struct {
	Path        string // the page listing them: /experiments, /projects/3, /workspaces/2
	ProjectID   int64  // the list is of one project (0: any)
	WorkspaceID int64  // the list is of one workspace (0: any)
	State       string // "" for every state
	User        string
	Label       string
	Search      string // in names and descriptions
	Archived    bool   // archived ones are shown too
	Sort        string // a column of ExperimentColumns; "" is id
	Desc        bool
	Page        int      // from 1
	Columns     []string // the chosen columns of ChoosableColumns, in table order; nil is DefaultColumns
}

// ExperimentTable is the live table of a list: one page of experiments.
type ExperimentTable struct {
	Query   ExperimentQuery
	Rows    []ExperimentRow
	Total   int // experiments matching the filter, on every page
	PerPage int
}

// ExperimentRow is one experiment as lists show it.
type ExperimentRow struct {
	Experiment      resolute.Experiment
	Searcher        string // the searcher's name
	Metric          string // the searcher's metric
	SmallerIsBetter bool
	Duration        string
}

// ExperimentColumns are the list's sortable columns: the sort key and the
// heading, in table order.
var ExperimentColumns = [][2]string{
	{"id", "ID"}, {"name", "Name"}, {"state", "State"}, {"progress", "Progress"}, {"best", "Best validation"},
	{"searcher", "Searcher"}, {"trials", "Trials"}, {"user", "User"}, {"start", "Started"}, {"duration", "Duration"},
	{"labels", "Labels"}, {"pool", "Pool"},
}

// ChoosableColumns are the columns the list's column chooser shows or
// hides; ID and name are always shown.
var ChoosableColumns = []string{"state", "progress", "best", "searcher", "trials", "user", "start", "duration", "labels", "pool"}

// DefaultColumns are the columns a list shows when its URL chooses none:
// all but the resource pool and the duration, so the table fits 1280 px.
var DefaultColumns = []string{"state", "progress", "best", "searcher", "trials", "user", "start", "labels"}

// DescendingFirst are the columns whose first click sorts the largest (or
// newest) first.
var DescendingFirst = map[string]bool{"id": true, "progress": true, "trials": true, "start": true, "duration": true}

// Values is the query's URL parameters; the zero ones are left out, so one
// list has one URL.
func (q ExperimentQuery) Values() url.Values {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("state", q.State)
	set("user", q.User)
	set("label", q.Label)
	set("q", q.Search)
	if q.Archived {
		v.Set("archived", "1")
	}
	if q.Sort != "" && (q.Sort != "id" || !q.Desc) {
		v.Set("sort", q.Sort)
		if q.Desc != DescendingFirst[q.Sort] {
			v.Set("order", order(q.Desc))
		}
	}
	if q.Page > 1 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	if q.Columns != nil && !slices.Equal(q.Columns, DefaultColumns) {
		v.Set("cols", strings.Join(q.Columns, ","))
	}
	return v
}

// Shows says whether the list shows column.
func (q ExperimentQuery) Shows(column string) bool {
	if column == "id" || column == "name" {
		return true
	}
	if q.Columns == nil {
		return slices.Contains(DefaultColumns, column)
	}
	return slices.Contains(q.Columns, column)
}

// URL is the list's page with the query.
func (q ExperimentQuery) URL() string {
	if s := q.Values().Encode(); s != "" {
		return q.Path + "?" + s
	}
	return q.Path
}

// TableURL is where htmx polls the table from: the same query, scoped.
func (q ExperimentQuery) TableURL() string {
	v := q.Values()
	if q.ProjectID != 0 {
		v.Set("project", itoa(q.ProjectID))
	}
	if q.WorkspaceID != 0 {
		v.Set("workspace", itoa(q.WorkspaceID))
	}
	return "/experiments/table?" + v.Encode()
}

// withPage is the query on another page.
func (q ExperimentQuery) withPage(n int) ExperimentQuery { q.Page = n; return q }

// sortedBy is the query sorted by column: the other way when it already is,
// else in the column's first direction; from the first page.
func (q ExperimentQuery) sortedBy(column string) ExperimentQuery {
	if q.sortKey() == column {
		q.Desc = !q.Desc
	} else {
		q.Sort, q.Desc = column, DescendingFirst[column]
	}
	q.Page = 1
	return q
}

func (q ExperimentQuery) sortKey() string {
	if q.Sort == "" {
		return "id"
	}
	return q.Sort
}

// ariaSort says how a column heading sorts the table, for screen readers.
func (q ExperimentQuery) ariaSort(column string) string {
	switch {
	case q.sortKey() != column:
		return "none"
	case q.Desc:
		return "descending"
	}
	return "ascending"
}

// Filtered says whether the query leaves experiments out.
func (q ExperimentQuery) Filtered() bool {
	return q.State != "" || q.User != "" || q.Label != "" || q.Search != ""
}

// Pages is the number of pages of the table.
func (t ExperimentTable) Pages() int {
	if t.PerPage <= 0 || t.Total == 0 {
		return 1
	}
	return (t.Total + t.PerPage - 1) / t.PerPage
}

// Activity is how busy a workspace or project is.
type Activity struct {
	Experiments int
	Active      int        // experiments ACTIVE now
	Last        *time.Time // the last start or end of one of its experiments
}

// lastActivity shows when something last happened, "–" if never.
func (a Activity) lastActivity() string { return stampp(a.Last) }

// user is the viewer's name as a URL parameter.
func (l DashboardLive) user() string { return url.QueryEscape(l.User) }

// jobHref is the page of a queued job: its experiment's or its task's.
func jobHref(j resolute.Job) string {
	if j.Type == "EXPERIMENT" {
		return "/experiments/" + j.EntityID
	}
	return "/tasks/" + j.EntityID
}

// columnChoices are the boxes of the experiment list's column chooser:
// the ChoosableColumns, in ExperimentColumns' order.
func (q ExperimentQuery) columnChoices() []columnChoice {
	var out []columnChoice
	for _, c := range ExperimentColumns {
		if slices.Contains(ChoosableColumns, c[0]) {
			out = append(out, columnChoice{c[0], c[1], q.Shows(c[0])})
		}
	}
	return out
}
