package views

import (
	"net/url"
	"strconv"

	"github.com/resolute-ml/resolute"
)

// TrialTab is one tab of a trial's page, at ?tab=Key.
type TrialTab struct {
	Key, Label string
}

// TrialTabs are the tabs of a trial's page, in order; the first is the
// default. The system tab is offered only where the trial has system
// metrics (TrialLive.System).
var TrialTabs = []TrialTab{
	{"overview", "Overview"},
	{"hyperparameters", "Hyperparameters"},
	{"checkpoints", "Checkpoints"},
	{"logs", "Logs"},
	{"metadata", "Metadata"},
	{"system", "System metrics"},
}

// CheckpointsPerPage is how many checkpoints the trial's checkpoints tab
// shows at once.
const CheckpointsPerPage = 20

// TrialPage is one trial (GET /trials/{id}?tab=): the live header with the
// tabs, then the chosen tab.
type TrialPage struct {
	Shell      Shell
	Experiment resolute.Experiment
	Live       TrialLive
	Logs       *TrialLogs // the logs tab
	// Ports are the trial's HTTP proxy ports, for the experiment's owner
	// while the trial runs.
	Ports []TaskPort
}

// TrialLive is the part of a trial's page that follows the run: the
// header, the tabs, and what the tab shows. Only the tab's fields are
// filled in.
type TrialLive struct {
	Tab      string // one of TrialTabs' keys
	Trial    resolute.Trial
	Metric   string      // the searcher's metric
	Hparams  [][2]string // name, compact JSON value; sorted by name
	Training MetricsTable
	// Validation is the latest validation reports.
	Validation  MetricsTable
	Checkpoints []CheckpointRow
	// Page is the checkpoints tab's page, from 1; Total how many
	// checkpoints there are in all.
	Page, Total int
	Allocations []resolute.Allocation
	Register    RegisterChoices
	Charts      *TrialCharts // nil where uPlot is not embedded
	// System is the profiler's charts: nil when the trial neither asks for
	// profiling nor reported system metrics, or uPlot is not embedded.
	System *SystemCharts
	// Metadata is what the trial set with core_context.train.set_metadata,
	// as indented JSON; "" when it set none.
	Metadata string
}

// Tabs are the tabs the trial offers: all but System metrics when it has
// none.
func (l TrialLive) Tabs() []TrialTab {
	var tabs []TrialTab
	for _, t := range TrialTabs {
		if t.Key != "system" || l.System != nil {
			tabs = append(tabs, t)
		}
	}
	return tabs
}

// trialTabURL is the address of a trial's tab; the overview is the
// trial's own.
func trialTabURL(id int64, tab string) string {
	if tab == "" || tab == TrialTabs[0].Key {
		return "/trials/" + itoa(id)
	}
	return "/trials/" + itoa(id) + "?tab=" + tab
}

// liveURL is where the live region asks for itself again: its tab, and
// the checkpoints' page.
func (l TrialLive) liveURL() string {
	v := url.Values{"tab": {l.Tab}}
	if l.Tab == "checkpoints" && l.Page > 1 {
		v.Set("page", strconv.Itoa(l.Page))
	}
	return "/trials/" + itoa(l.Trial.ID) + "/live?" + v.Encode()
}

// pageURL is the checkpoints tab at page n.
func (l TrialLive) pageURL(n int) string {
	u := trialTabURL(l.Trial.ID, "checkpoints")
	if n > 1 {
		u += "&page=" + strconv.Itoa(n)
	}
	return u
}

// Pages is how many pages the checkpoints fill; at least 1.
func (l TrialLive) Pages() int {
	return max(1, (l.Total+CheckpointsPerPage-1)/CheckpointsPerPage)
}

// pageRange says which checkpoints the page shows, e.g. 21–40 of 54.
func (l TrialLive) pageRange() string {
	first := (l.Page-1)*CheckpointsPerPage + 1
	return strconv.Itoa(first) + "–" + strconv.Itoa(first+len(l.Checkpoints)-1) + " of " + strconv.Itoa(l.Total)
}
