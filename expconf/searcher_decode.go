package expconf

import (
	"cmp"
	"gopkg.in/yaml.v3"
)

// Searcher defaults.
const (
	DefaultMaxConcurrentTrials = 16
	DefaultDivisor             = 4
	DefaultMaxRungs            = 5
)

// Length units of the deprecated max_length, min_validation_period and
// min_checkpoint_period keys.
const (
	UnitBatches = "batches"
	UnitRecords = "records"
	UnitEpochs  = "epochs"
)

var searcherNames = []string{SearcherSingle, SearcherRandom, SearcherGrid, SearcherAdaptiveASHA, SearcherAsyncHalving}

// removedSearchers are searchers Determined dropped; configs naming them get
// a message that says so rather than "unknown".
var removedSearchers = map[string]bool{
	"custom": true, "adaptive": true, "adaptive_simple": true, "sync_halving": true,
	"pbt": true, "adaptive_asha_simple": true,
}

// searcherKeys lists the keys each searcher accepts besides the common ones.
var searcherKeys = map[string][]string{
	SearcherSingle: {},
	SearcherRandom: {"max_trials", "max_concurrent_trials"},
	SearcherGrid:   {"max_concurrent_trials"},
	SearcherAdaptiveASHA: {"max_trials", "max_time", "time_metric", "mode", "divisor",
		"max_rungs", "bracket_rungs", "max_concurrent_trials", "stop_once"},
	SearcherAsyncHalving: {"num_rungs", "max_trials", "max_time", "time_metric", "divisor",
		"max_concurrent_trials", "stop_once"},
}

var searcherCommonKeys = []string{"name", "metric", "smaller_is_better", "source_trial_id",
	"source_checkpoint_uuid", "max_length"}

func (d *decoder) searcher(n *yaml.Node, hps Hyperparameters) SearcherConfig {
	const path = "searcher"
	o := d.object(n, path)
	var s SearcherConfig
	if !o.has("name") {
		if o.node != nil && o.node.Kind == yaml.MappingNode {
			d.fail(o.line(), "searcher.name", "required (one of %s)", orList(searcherNames))
		}
		markAll(o)
		return s
	}
	o.str("name", &s.Name)
	if removedSearchers[s.Name] {
		d.fail(o.take("name"), "searcher.name", "the %s searcher was removed in Determined 0.38 and is not supported; use one of %s",
			s.Name, orList(searcherNames))
		markAll(o)
		return s
	}
	allowed, ok := searcherKeys[s.Name]
	if !ok {
		d.fail(o.take("name"), "searcher.name", "must be one of %s, got %q", orList(searcherNames), s.Name)
		markAll(o)
		return s
	}

	// Keys that belong to another searcher are not "unknown": say whose they are.
	mine := map[string]bool{}
	for _, k := range append(append([]string{}, searcherCommonKeys...), allowed...) {
		mine[k] = true
	}
	for _, keys := range searcherKeys {
		for _, k := range keys {
			if !mine[k] {
				o.reject(k, "not used by the "+s.Name+" searcher")
				mine[k] = true
			}
		}
	}
	// Only ask for the keys this searcher has, so typos suggest those.
	has := func(k string) bool {
		for _, a := range allowed {
			if a == k {
				return true
			}
		}
		return false
	}

	o.str("metric", &s.Metric)
	s.SmallerIsBetter = true
	o.boolean("smaller_is_better", &s.SmallerIsBetter)
	s.SourceTrialID = o.intPtr("source_trial_id")
	var uuid string
	if o.str("source_checkpoint_uuid", &uuid) {
		s.SourceCheckpointUUID = &uuid
	}
	if ln := o.deprecated("max_length", "deprecated since Determined 0.38; the training length belongs in the training code (for adaptive_asha set max_time and time_metric)"); ln != nil {
		s.MaxLength = d.length(ln, "searcher.max_length")
	}

	if has("max_trials") {
		if o.integer("max_trials", &s.MaxTrials) {
			if s.MaxTrials < 1 {
				d.fail(o.take("max_trials"), "searcher.max_trials", "must be at least 1, got %d", s.MaxTrials)
			}
		} else if !o.has("max_trials") {
			d.fail(o.line(), "searcher.max_trials", "required when searcher.name is %s", s.Name)
		}
	}
	if has("max_concurrent_trials") {
		s.MaxConcurrentTrials = DefaultMaxConcurrentTrials
		if o.integer("max_concurrent_trials", &s.MaxConcurrentTrials) && s.MaxConcurrentTrials < 0 {
			d.fail(o.take("max_concurrent_trials"), "searcher.max_concurrent_trials", "must be 0 (no limit) or more, got %d", s.MaxConcurrentTrials)
		}
	}
	if has("max_time") {
		d.timeBudget(o, &s)
	}
	if has("divisor") {
		s.Divisor = DefaultDivisor
		if o.number("divisor", &s.Divisor) && s.Divisor <= 1 {
			d.fail(o.take("divisor"), "searcher.divisor", "must be greater than 1, got %s", fmtNum(s.Divisor))
		}
	}
	if has("stop_once") {
		o.deprecated("stop_once", "deprecated; ASHA always stops trials early now")
	}
	switch s.Name {
	case SearcherAdaptiveASHA:
		s.Mode = ModeStandard
		if o.str("mode", &s.Mode) {
			d.oneOf(o.take("mode"), "searcher.mode", s.Mode, ModeStandard, ModeAggressive, ModeConservative)
		}
		s.MaxRungs = DefaultMaxRungs
		if o.integer("max_rungs", &s.MaxRungs) && s.MaxRungs < 1 {
			d.fail(o.take("max_rungs"), "searcher.max_rungs", "must be at least 1, got %d", s.MaxRungs)
		}
		if items, ok := o.list("bracket_rungs"); ok {
			s.BracketRungs = []int{}
			for i, item := range items {
				if item == nil {
					d.fail(nil, index("searcher.bracket_rungs", i), "expected an integer, got null")
					continue
				}
				if v, ok := d.integer(item, index("searcher.bracket_rungs", i)); ok {
					if v < 1 {
						d.fail(item, index("searcher.bracket_rungs", i), "must be at least 1, got %d", v)
					}
					s.BracketRungs = append(s.BracketRungs, v)
				}
			}
		}
	case SearcherAsyncHalving:
		if o.integer("num_rungs", &s.NumRungs) {
			if s.NumRungs < 1 {
				d.fail(o.take("num_rungs"), "searcher.num_rungs", "must be at least 1, got %d", s.NumRungs)
			}
		} else if !o.has("num_rungs") {
			d.fail(o.line(), "searcher.num_rungs", "required when searcher.name is async_halving")
		}
	case SearcherGrid:
		d.gridMissingCount(hps, "hyperparameters", o.line())
	}
	o.done()
	return s
}

// timeBudget reads max_time and time_metric, which ASHA needs since
// Determined 0.38. Older configs give only max_length: then its unit becomes
// the time metric and its length the budget, with a warning already issued.
func (d *decoder) timeBudget(o *object, s *SearcherConfig) {
	hasTime := o.integer("max_time", &s.MaxTime)
	if hasTime && s.MaxTime < 1 {
		d.fail(o.take("max_time"), "searcher.max_time", "must be at least 1, got %d", s.MaxTime)
	}
	hasMetric := o.str("time_metric", &s.TimeMetric)
	if hasMetric && s.TimeMetric == "" {
		d.fail(o.take("time_metric"), "searcher.time_metric", "must not be empty")
	}
	if s.MaxLength != nil {
		if !hasTime && !o.has("max_time") {
			s.MaxTime, hasTime = s.MaxLength.Units, true
		}
		if !hasMetric && !o.has("time_metric") {
			// A unitless length counts steps, which trials report as batches.
			s.TimeMetric, hasMetric = cmp.Or(s.MaxLength.Unit, UnitBatches), true
		}
	}
	if !hasTime && !o.has("max_time") {
		d.fail(o.line(), "searcher.max_time", "required when searcher.name is %s", s.Name)
	}
	if !hasMetric && !o.has("time_metric") {
		d.fail(o.line(), "searcher.time_metric", "required when searcher.name is %s", s.Name)
	}
}

// length reads a `{batches|records|epochs: N}` training length, or a bare
// integer: a unitless length, which Determined's Core API tutorials use.
func (d *decoder) length(n *yaml.Node, path string) *Length {
	if r := d.resolve(n); r != nil && r.Kind == yaml.ScalarNode && r.ShortTag() == "!!int" {
		v, ok := d.integer(r, path)
		if !ok {
			return nil
		}
		if v < 0 {
			d.fail(r, path, "must be 0 or more, got %d", v)
		}
		return &Length{Units: v}
	}
	o := d.object(n, path)
	var l *Length
	for _, unit := range []string{UnitBatches, UnitRecords, UnitEpochs} {
		var v int
		if !o.integer(unit, &v) {
			continue
		}
		if v < 0 {
			d.fail(o.take(unit), join(path, unit), "must be 0 or more, got %d", v)
		}
		if l != nil {
			d.fail(o.take(unit), path, "give exactly one of batches, records or epochs")
			continue
		}
		l = &Length{Unit: unit, Units: v}
	}
	if l == nil && o.node != nil && o.node.Kind == yaml.MappingNode {
		d.fail(o.line(), path, "give exactly one of batches, records or epochs")
	}
	o.done()
	return l
}

func (l *Length) render() any {
	if l == nil {
		return nil
	} else if l.Unit == "" {
		return l.Units
	}
	return map[string]any{l.Unit: l.Units}
}

func markAll(o *object) {
	for _, k := range o.order {
		o.asked[k] = true
	}
}

func (s SearcherConfig) render() map[string]any {
	if s.Name == "" {
		return nil
	}
	m := map[string]any{"name": s.Name, "smaller_is_better": s.SmallerIsBetter}
	if s.Metric != "" {
		m["metric"] = s.Metric
	}
	if s.SourceTrialID != nil {
		m["source_trial_id"] = *s.SourceTrialID
	}
	if s.SourceCheckpointUUID != nil {
		m["source_checkpoint_uuid"] = *s.SourceCheckpointUUID
	}
	if s.MaxLength != nil {
		m["max_length"] = s.MaxLength.render()
	}
	keys := map[string]bool{}
	for _, k := range searcherKeys[s.Name] {
		keys[k] = true
	}
	set := func(k string, v any) {
		if keys[k] {
			m[k] = v
		}
	}
	set("max_trials", s.MaxTrials)
	set("max_concurrent_trials", s.MaxConcurrentTrials)
	set("max_time", s.MaxTime)
	set("time_metric", s.TimeMetric)
	set("divisor", s.Divisor)
	if s.Name == SearcherAdaptiveASHA {
		m["mode"], m["max_rungs"] = s.Mode, s.MaxRungs
		if s.BracketRungs != nil {
			m["bracket_rungs"] = s.BracketRungs
		}
	}
	if s.Name == SearcherAsyncHalving {
		m["num_rungs"] = s.NumRungs
	}
	return m
}
