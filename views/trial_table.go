package views

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// TrialQuery is what the trials tab's URL asks for: the order, the page,
// the columns and the trials brushed on the hyperparameters tab.
type TrialQuery struct {
	ExperimentID int64
	Sort         string // a TrialColumn's key or "id"; "" is id
	Desc         bool
	Page         int // from 1
	// Columns are the chosen columns' keys in table order; nil is the
	// default (TrialTable.Default).
	Columns []string
	// Brushed keeps only these trials; nil keeps every one.
	Brushed []int64
}

// TrialColumn is a column the trials tab's chooser offers: a fixed one
// (state, best, ...), hp.NAME of a hyperparameter or m.NAME of a metric
// in each trial's latest validation.
type TrialColumn struct {
	Key, Label string
	// Constant is the value every trial has, for a hyperparameter that
	// does not vary; "" otherwise.
	Constant string
}

// TrialTable is the trials tab's table around its rows: the query, what
// the chooser offers, and the pages.
type TrialTable struct {
	Query     TrialQuery
	Choosable []TrialColumn
	Default   []string // the columns shown when none are chosen: every fixed one and the hyperparameters that vary
	Total     int      // the trials the query keeps, on every page
	PerPage   int
	// AllTrials is how many trials the experiment has, brushed or not.
	AllTrials int
}

// TrialFixedColumns are the trials tab's columns that every experiment
// has, beside the trial's id, in table order.
var TrialFixedColumns = []TrialColumn{
	{Key: "state", Label: "State"}, {Key: "best", Label: "Best"}, {Key: "steps", Label: "Steps"},
	{Key: "restarts", Label: "Restarts"}, {Key: "checkpoints", Label: "Checkpoints"}, {Key: "started", Label: "Started"},
	{Key: "ended", Label: "Ended"}, {Key: "duration", Label: "Duration"},
}

// Shows says whether the table shows column key; the sorted column is
// always shown.
func (t TrialTable) Shows(key string) bool {
	if key == "id" || key == t.Query.sortKey() {
		return true
	}
	if t.Query.Columns == nil {
		return slices.Contains(t.Default, key)
	}
	return slices.Contains(t.Query.Columns, key)
}

// Constants are the hyperparameters every trial shares that the table
// does not show.
func (t TrialTable) Constants() []TrialColumn {
	var out []TrialColumn
	for _, c := range t.Choosable {
		if c.Constant != "" && !t.Shows(c.Key) {
			out = append(out, c)
		}
	}
	return out
}

// Pages is the number of pages of the table.
func (t TrialTable) Pages() int {
	if t.PerPage <= 0 || t.Total == 0 {
		return 1
	}
	return (t.Total + t.PerPage - 1) / t.PerPage
}

func (q TrialQuery) sortKey() string {
	if q.Sort == "" {
		return "id"
	}
	return q.Sort
}

// Values is the query as URL parameters, the tab's included; zero ones
// are left out, so one view has one URL.
func (q TrialQuery) Values() url.Values {
	v := url.Values{"tab": {"trials"}}
	if q.sortKey() != "id" {
		v.Set("sort", q.Sort)
	}
	if q.Desc {
		v.Set("order", "desc")
	}
	if q.Page > 1 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	if q.Columns != nil {
		v.Set("cols", strings.Join(q.Columns, ","))
	}
	if q.Brushed != nil {
		ids := make([]string, len(q.Brushed))
		for i, id := range q.Brushed {
			ids[i] = itoa(id)
		}
		v.Set("brushed", strings.Join(ids, ","))
	}
	return v
}

// URL is the trials tab with the query.
func (q TrialQuery) URL() string {
	return "/experiments/" + itoa(q.ExperimentID) + "?" + q.Values().Encode()
}

// sortedBy is the query sorted by column, the other way when it already
// is; from the first page.
func (q TrialQuery) sortedBy(column string) TrialQuery {
	if q.sortKey() == column {
		q.Desc = !q.Desc
	} else {
		q.Sort, q.Desc = column, false
	}
	q.Page = 1
	return q
}

func (q TrialQuery) withPage(n int) TrialQuery { q.Page = n; return q }

// withConstants is the query showing every column the table shows now and
// the hyperparameters every trial shares.
func (t TrialTable) withConstants() TrialQuery {
	q := t.Query
	q.Columns = []string{}
	for _, c := range t.columnKeys() {
		if t.Shows(c) || t.isConstant(c) {
			q.Columns = append(q.Columns, c)
		}
	}
	return q
}

// showsConstants says whether the table shows a hyperparameter every
// trial shares.
func (t TrialTable) showsConstants() bool {
	return slices.ContainsFunc(t.Choosable, func(c TrialColumn) bool { return c.Constant != "" && t.Shows(c.Key) })
}

// withoutConstants is the query without the columns of the
// hyperparameters every trial shares: the default columns when that is
// what is left.
func (t TrialTable) withoutConstants() TrialQuery {
	q := t.Query
	q.Columns = []string{}
	for _, c := range t.Choosable {
		if t.Shows(c.Key) && c.Constant == "" {
			q.Columns = append(q.Columns, c.Key)
		}
	}
	if slices.Equal(q.Columns, t.Default) {
		q.Columns = nil
	}
	if t.isConstant(q.sortKey()) {
		q.Sort, q.Desc = "", false
	}
	return q
}

func (t TrialTable) isConstant(key string) bool {
	return slices.ContainsFunc(t.Choosable, func(c TrialColumn) bool { return c.Key == key && c.Constant != "" })
}

func (t TrialTable) columnKeys() []string {
	out := make([]string, len(t.Choosable))
	for i, c := range t.Choosable {
		out[i] = c.Key
	}
	return out
}

// unbrushed is the query over every trial.
func (q TrialQuery) unbrushed() TrialQuery { q.Brushed, q.Page = nil, 1; return q }

// ariaSort says how a column heading sorts the table, for screen readers.
func (q TrialQuery) ariaSort(column string) string {
	switch {
	case q.sortKey() != column:
		return "none"
	case q.Desc:
		return "descending"
	}
	return "ascending"
}

// kept are the query's parameters the column chooser sends again with the
// columns: all but the columns and the page, in a fixed order.
func (q TrialQuery) kept() [][2]string {
	v := q.Values()
	var out [][2]string
	for _, k := range []string{"tab", "sort", "order", "brushed"} {
		if v.Has(k) {
			out = append(out, [2]string{k, v.Get(k)})
		}
	}
	return out
}
