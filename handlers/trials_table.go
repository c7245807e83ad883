package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/views"
)

// trialsPerPage is the length of a page of an experiment's trials tab.
const trialsPerPage = 50

// maxBrushed bounds the trials a trials tab's URL may name as brushed.
const maxBrushed = 10000

// trialsTab fills in the trials tab of l from the URL's sort, order, page,
// cols and brushed: the columns the experiment's trials offer (the
// hyperparameters every trial shares hidden unless chosen; the metrics
// the newest trials reported last, and any the URL names), and one page of
// trials, sorted and cut by the database.
func (s *Server) trialsTab(r *http.Request, l *views.ExperimentLive) error {
	ctx := r.Context()
	q, chosen, err := readTrialQuery(r.URL.Query())
	if err != nil {
		return err
	}
	q.ExperimentID = l.Experiment.ID
	hps, trials, err := s.db.TrialHparamValues(ctx, l.Experiment.ID)
	if err != nil {
		return err
	}
	t := views.TrialTable{PerPage: trialsPerPage, AllTrials: trials}
	t.Choosable, t.Default = trialColumns(hps, trials, nil, l.Metric)
	if !knownColumn(t.Choosable, q.Sort) {
		return resolute.Errorf(resolute.EInvalid, "sort: unknown column %q; sort by id, %s or m.NAME of a validation metric",
			q.Sort, strings.Join(columnKeys(t.Choosable), ", "))
	}
	for _, c := range chosen {
		if !knownColumn(t.Choosable, c) {
			return resolute.Errorf(resolute.EInvalid, "cols: unknown column %q; choose from %s or m.NAME of a validation metric",
				c, strings.Join(columnKeys(t.Choosable), ", "))
		}
	}
	rows, total, err := s.db.TrialPage(ctx, db.TrialPageFilter{ExperimentID: l.Experiment.ID, IDs: q.Brushed, Sort: q.Sort,
		Descending: q.Desc, Now: s.now(), Limit: trialsPerPage, Offset: (q.Page - 1) * trialsPerPage})
	if err != nil {
		return err
	}
	// The metrics: those the newest trials reported last (the same on
	// every page), and any the URL names.
	metrics, err := s.db.LatestValidationNames(ctx, l.Experiment.ID)
	if err != nil {
		return err
	}
	for _, k := range append(slices.Clone(chosen), q.Sort) {
		if name, ok := strings.CutPrefix(k, "m."); ok && !slices.Contains(metrics, name) {
			metrics = append(metrics, name)
		}
	}
	slices.Sort(metrics)
	t.Choosable, t.Default = trialColumns(hps, trials, metrics, l.Metric)
	keys := columnKeys(t.Choosable)
	if chosen != nil {
		q.Columns = []string{}
		for _, k := range keys { // in table order
			if slices.Contains(chosen, k) {
				q.Columns = append(q.Columns, k)
			}
		}
		if slices.Equal(q.Columns, t.Default) {
			q.Columns = nil
		}
	}
	t.Query, t.Total = q, total
	l.Table = t
	for _, k := range keys {
		if name, ok := strings.CutPrefix(k, "hp."); ok && t.Shows(k) {
			l.HparamNames = append(l.HparamNames, name)
		} else if name, ok := strings.CutPrefix(k, "m."); ok && t.Shows(k) {
			l.MetricNames = append(l.MetricNames, name)
		}
	}
	var latest map[int64]map[string]json.RawMessage
	if len(l.MetricNames) > 0 && len(rows) > 0 {
		ids := make([]int64, len(rows))
		for i, row := range rows {
			ids[i] = row.ID
		}
		if latest, err = s.db.LatestValidations(ctx, ids); err != nil {
			return err
		}
	}
	for _, row := range rows {
		values := flatHparams(row.Hparams)
		tr := views.TrialRow{Trial: row.Trial, Checkpoints: row.Checkpoints, Ran: s.ran(row.CreatedAt, row.EndedAt)}
		for _, n := range l.HparamNames {
			tr.Values = append(tr.Values, hparamText(values[n]))
		}
		for _, n := range l.MetricNames {
			tr.Metrics = append(tr.Metrics, metricCell(latest[row.ID][n]))
		}
		l.Trials = append(l.Trials, tr)
	}
	return nil
}

// knownColumn says whether key is a column of the trials tab: id, one of
// the choosable, or m.NAME of any metric (a trial that never reported it
// shows none).
func knownColumn(choosable []views.TrialColumn, key string) bool {
	name, metric := strings.CutPrefix(key, "m.")
	return key == "id" || metric && name != "" || slices.Contains(columnKeys(choosable), key)
}

func columnKeys(cs []views.TrialColumn) []string {
	keys := make([]string, len(cs))
	for i, c := range cs {
		keys[i] = c.Key
	}
	return keys
}

// readTrialQuery reads the trials tab's order, page and brushed trials
// from v, and the columns chosen: the chooser's boxes (col, repeated) or
// the URL's cols (comma separated); nil when neither.
func readTrialQuery(v url.Values) (views.TrialQuery, []string, error) {
	q := views.TrialQuery{Sort: v.Get("sort"), Page: 1}
	if q.Sort == "" {
		q.Sort = "id"
	}
	switch o := v.Get("order"); o {
	case "", "asc":
	case "desc":
		q.Desc = true
	default:
		return q, nil, resolute.Errorf(resolute.EInvalid, "order: expected asc or desc, got %q", o)
	}
	if d := v.Get("desc"); d == "1" || d == "true" { // the tab's first links said desc=1
		q.Desc = true
	}
	if p := v.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return q, nil, resolute.Errorf(resolute.EInvalid, "page: expected a positive integer, got %q", p)
		}
		q.Page = n
	}
	if b, ok := v["brushed"]; ok {
		q.Brushed = []int64{}
		for _, f := range strings.Split(strings.Join(b, ","), ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			id, err := positiveID("brushed", f)
			if err != nil {
				return q, nil, err
			}
			if !slices.Contains(q.Brushed, id) {
				q.Brushed = append(q.Brushed, id)
			}
			if len(q.Brushed) > maxBrushed {
				return q, nil, resolute.Errorf(resolute.EInvalid, "brushed: more than %d trials", maxBrushed)
			}
		}
		slices.Sort(q.Brushed)
	}
	chosen := v["col"]
	if len(chosen) == 0 && v.Get("cols") != "" {
		chosen = strings.Split(v.Get("cols"), ",")
	}
	return q, chosen, nil
}

// trialColumns are the columns the trials tab offers, in table order (the
// state, the hyperparameters, the best and latest validation metrics, then
// the rest), and those shown by default: all but the metrics beside the
// best and the hyperparameters every trial has the same. hps are the
// top-level hyperparameters' distinct values over the experiment's trials
// (nested ones are named by their dotted path).
func trialColumns(hps []db.HparamValue, trials int, metrics []string, metric string) (choosable []views.TrialColumn, defaults []string) {
	type seen struct {
		values map[string]bool // as PostgreSQL writes them, one way each
		trials int
		first  json.RawMessage
	}
	flat := map[string]*seen{}
	var names []string
	add := func(name string, raw json.RawMessage, n int) {
		f := flat[name]
		if f == nil {
			f = &seen{values: map[string]bool{}, first: raw}
			flat[name] = f
			names = append(names, name)
		}
		f.values[string(raw)] = true
		f.trials += n
	}
	for _, v := range hps {
		if len(v.Value) == 0 || v.Value[0] != '{' { // most are numbers or strings: no need to parse them
			add(v.Name, v.Value, v.Trials)
			continue
		}
		for name, raw := range flatHparams(json.RawMessage(`{"` + jsonKey(v.Name) + `":` + string(v.Value) + `}`)) {
			add(name, raw, v.Trials)
		}
	}
	slices.Sort(names)
	fixed := views.TrialFixedColumns
	choosable = append(choosable, fixed[0])
	for _, n := range names {
		c := views.TrialColumn{Key: "hp." + n, Label: n}
		if f := flat[n]; trials > 1 && len(f.values) == 1 && f.trials == trials {
			c.Constant = hparamText(f.first)
		}
		choosable = append(choosable, c)
	}
	best := fixed[1]
	best.Label = "Best " + metric
	choosable = append(choosable, best)
	for _, m := range metrics {
		choosable = append(choosable, views.TrialColumn{Key: "m." + m, Label: m})
	}
	choosable = append(choosable, fixed[2:]...)
	for _, c := range choosable {
		if c.Constant == "" && !strings.HasPrefix(c.Key, "m.") {
			defaults = append(defaults, c.Key)
		}
	}
	return choosable, defaults
}

// jsonKey is name as the inside of a JSON string.
func jsonKey(name string) string {
	b, _ := json.Marshal(name)
	return string(b[1 : len(b)-1])
}

// metricCell shows a metric's value in the trials table as the best
// value's column does (six significant digits), "–" when the trial has
// none.
func metricCell(raw json.RawMessage) string {
	var f float64
	if json.Unmarshal(raw, &f) != nil {
		return "–"
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}
