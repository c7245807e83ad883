package views

// TrialCharts is a chart per metric group of a trial (web/static/charts.js).
type TrialCharts struct {
	TrialID int64
	Groups  []string // training and validation first
	Metric  string   // the searcher's metric, which validation's downsampling keeps
}

// ExperimentChart is the chart of one metric over every trial of an
// experiment, with a picker of the metrics the trials reported.
type ExperimentChart struct {
	ExperimentID int64
	Groups       []MetricNames // training and validation
	// Group and Metric are the metric shown first: the searcher's, on
	// validation.
	Group, Metric string
	// ExperimentIDs, when more than one, are the experiments the compare
	// page charts together, a line per trial coloured by experiment.
	ExperimentIDs []int64
	// TrialIDs, if any, are the only trials charted.
	TrialIDs []int64
}

// MetricNames are the names of the metrics of a group.
type MetricNames struct {
	Group string
	Names []string
}
