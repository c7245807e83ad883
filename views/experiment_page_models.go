package views

import (
	"time"

	"github.com/resolute-ml/resolute"
)

// ExperimentTab is one tab of an experiment's page, at ?tab=Key.
type ExperimentTab struct {
	Key, Label string
}

// ExperimentTabs are the tabs of an experiment's page, in order; the first
// is the default.
var ExperimentTabs = []ExperimentTab{
	{"overview", "Overview"},
	{"trials", "Trials"},
	{"hyperparameters", "Hyperparameters"},
	{"checkpoints", "Checkpoints"},
	{"configuration", "Configuration"},
	{"logs", "Logs"},
	{"notes", "Notes"},
}

// ExperimentPage is one experiment (GET /experiments/{id}?tab=): the live
// header and the chosen tab. Only the chosen tab's model is filled in.
type ExperimentPage struct {
	Shell   Shell
	Live    ExperimentLive
	Config  *ExperimentConfig // the configuration tab
	Logs    *ExperimentLogs   // the logs tab
	HParams *HParamData       // the hyperparameters tab
	Notes   *ExperimentNotes  // the notes tab
}

// ExperimentLive is the part of an experiment's page that follows the run:
// the header, and what the tab shows of trials and checkpoints. htmx
// replaces it from GET /experiments/{id}/live?tab= on each pushed change
// while the experiment runs.
type ExperimentLive struct {
	Tab             string // one of ExperimentTabs' keys
	Experiment      resolute.Experiment
	Metric          string // the searcher's metric
	SmallerIsBetter bool
	Duration        string
	CanChange       bool // the viewer may pause, kill, edit, archive or delete it
	Edit            ExperimentEdit
	// Trials are the best few on the overview, with HparamNames as the
	// table's columns; on the trials tab, one page of the table, with
	// HparamNames and MetricNames the hyperparameter and metric columns
	// shown.
	Trials      []TrialRow
	HparamNames []string
	MetricNames []string
	// Table is the trials tab's query, columns and pages.
	Table       TrialTable
	Checkpoints []CheckpointRow // the checkpoints tab
	Register    RegisterChoices
	Latest      []MetricsTable // overview: the latest report of each group, of the best trial
	// Chart is the overview's chart, nil where uPlot is not embedded. In
	// the live fragment hx-preserve keeps the page's chart in its place;
	// only its metrics are taken (ExperimentChartOptions).
	Chart *ExperimentChart
}

// TrialRow is one trial as tables show it.
type TrialRow struct {
	Trial       resolute.Trial
	Values      []string      // each of ExperimentLive.HparamNames' value, compact JSON
	Metrics     []string      // each of ExperimentLive.MetricNames' value in its latest validation
	Checkpoints int           // completed checkpoints
	Ran         time.Duration // from its start until it ended, or until now
}

// ExperimentEdit is what the header edits in place: labels and
// scheduling, as stored or as typed into a rejected form.
type ExperimentEdit struct {
	ExperimentID int64
	Labels       []string
	Label        string // a label being added
	// Schedulable says the scheduling can change: the experiment has not
	// ended. Priority, Weight and MaxSlots are the form's values ("" for
	// the pool's default or no limit).
	Schedulable bool
	Priority    string
	Weight      string
	MaxSlots    string
	// PriorityOrder says which way priorities run in the experiment's pool.
	PriorityOrder string
	Errors        FormErrors // label, priority, weight, max_slots
}

// ExperimentConfig is the configuration tab: the expanded config, the one
// submitted, and the form that forks the experiment with an edited one.
type ExperimentConfig struct {
	ExperimentID int64
	Template     string // the experiment's template, which a fork keeps
	ConfigYAML   string // expanded, in the order of the reference (expconf.OrderedYAML)
	OriginalYAML string // as submitted
	// Unused are the keys (section.key) that have no effect on this
	// master, with why (expconf.UnusedOn).
	Unused map[string]string
	// ForkYAML is the fork form's config: the submitted one, or what was
	// typed into a rejected fork.
	ForkYAML string
	// Continuable are the trials with a checkpoint a fork may continue from.
	Continuable []resolute.Trial
	ContinueID  int64      // the trial picked, 0 for none
	Errors      FormErrors // yaml, continue_trial
}

// ExperimentLogs is the logs tab: the lines of every trial, under a level
// and text filter, followed while the experiment runs.
type ExperimentLogs struct {
	ExperimentID int64
	Lines        []ExperimentLogLine
	After        int64  // the last line's id, where following continues
	Level        string // "" for every level
	Search       string
	Trial        int64   // the one trial shown; 0 for every trial
	Trials       []int64 // the experiment's trials, which the filter offers
	Done         bool    // the experiment ended and every line is shown
}

// ExperimentLogLine is a log line of one of an experiment's trials.
type ExperimentLogLine struct {
	LogLine
	TrialID int64
}

// ExperimentNotes is the notes tab: the Markdown source and its rendering.
type ExperimentNotes struct {
	ExperimentID int64
	Source       string // as stored, or as typed into a rejected edit
	// HTML is Source rendered by package markdown, which escapes it.
	HTML      string
	CanChange bool
	Editing   bool // open the editor (after a rejected edit)
	Errors    FormErrors
}

// HParamData is the hyperparameters tab: each trial's hyperparameters and
// its best value of the searcher's metric.
type HParamData struct {
	ExperimentID    int64
	Metric          string
	SmallerIsBetter bool
	Names           []string // the hyperparameters, sorted
	Log             []bool   // per Names: searched on a log scale (type: log)
	Trials          []HParamTrial
	// Scatter says uPlot is embedded (after `make web`) to draw the
	// scatter plots; without it the tab shows parallel coordinates only.
	Scatter bool
	// Chart is the experiment's metric charts, a line per trial, which
	// draw the brushed trials highlighted as the brush moves; nil where
	// uPlot is not embedded or no trial is plotted.
	Chart *ExperimentChart
}

// HParamTrial is one trial's point in the hyperparameter plots.
type HParamTrial struct {
	ID     int64
	Values []any // per Names: a float64, or a string for other values; nil if absent
	Metric float64
}

// ConfigCheck is the new-experiment form's check of its config, from
// POST /experiments/new/validate as it is typed.
type ConfigCheck struct {
	Empty    bool   // nothing to check yet
	Summary  string // what a valid config will do
	Problems []ConfigProblem
}

// ConfigProblem is one error in a config: its key path, if known, the
// message, and the YAML line where the parser knew it (0 if unknown).
type ConfigProblem struct {
	Path    string
	Message string
	Line    int
}
