package searcher

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/resolute-ml/resolute/expconf"
)

// Plan is what a search will do before any trial runs, for
// `det preview-search`.
type Plan struct {
	Searcher        string `json:"searcher"`
	Metric          string `json:"metric"`
	SmallerIsBetter bool   `json:"smallerIsBetter"`
	// Trials is the number of trials the search creates: max_trials, the
	// grid size for grid, 1 for single.
	Trials int `json:"trials"`
	// MaxConcurrentTrials is how many trials run at once at most; 0 means no
	// limit. For ASHA it is the sum over brackets of the trials each starts
	// with: its share, but no more than its trials.
	MaxConcurrentTrials int `json:"maxConcurrentTrials"`
	// TimeMetric and MaxTime are ASHA's training budget per trial.
	TimeMetric string `json:"timeMetric"`
	MaxTime    int    `json:"maxTime"`
	// Brackets are ASHA's brackets, most rungs first; empty otherwise.
	Brackets []BracketPlan `json:"brackets"`
}

// BracketPlan is one ASHA bracket.
type BracketPlan struct {
	NumRungs int `json:"numRungs"`
	Trials   int `json:"trials"`
	// MaxConcurrentTrials is the bracket's share of max_concurrent_trials.
	MaxConcurrentTrials int        `json:"maxConcurrentTrials"`
	Rungs               []RungPlan `json:"rungs"`
}

// RungPlan is one rung of a bracket. Trials is the nominal number of trials
// that train to Target: the bracket's trials at the first rung, then
// max(⌊previous/divisor⌋, 1). Early-stopping ASHA decides as metrics arrive,
// so a run can promote a few more.
type RungPlan struct {
	Target uint64 `json:"target"`
	Trials int    `json:"trials"`
}

// Preview validates cfg and space and returns the plan of the search.
func Preview(cfg expconf.SearcherConfig, space expconf.Hyperparameters) (Plan, error) {
	s, err := build(cfg, space)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{
		Searcher:            cfg.Name,
		Metric:              cfg.Metric,
		SmallerIsBetter:     cfg.SmallerIsBetter,
		Trials:              s.cfg.MaxTrials,
		MaxConcurrentTrials: cfg.MaxConcurrentTrials,
	}
	switch m := s.method.(type) {
	case gridSearch:
		p.Trials = m.size
	case ashaSearch:
		p.TimeMetric, p.MaxTime, p.MaxConcurrentTrials = m.timeMetric, m.maxTime, 0
		for _, b := range s.st.Brackets {
			share := b.MaxConcurrent
			if share <= 0 {
				share = m.initialCount(b)
			}
			bp := BracketPlan{NumRungs: b.NumRungs, Trials: b.MaxTrials, MaxConcurrentTrials: share}
			n := b.MaxTrials
			for k, r := range b.Rungs {
				if k > 0 {
					n = max(int(float64(n)/m.divisor), 1)
				}
				bp.Rungs = append(bp.Rungs, RungPlan{Target: r.Target, Trials: n})
			}
			p.Brackets = append(p.Brackets, bp)
			p.MaxConcurrentTrials += m.initialCount(b)
		}
	}
	return p, nil
}

// String renders the plan as text tables a CLI can print.
func (p Plan) String() string {
	var sb strings.Builder
	order := "smaller is better"
	if !p.SmallerIsBetter {
		order = "larger is better"
	}
	concurrent := "no limit on concurrent trials"
	if p.MaxConcurrentTrials > 0 {
		concurrent = fmt.Sprintf("at most %d at a time", p.MaxConcurrentTrials)
	}
	fmt.Fprintf(&sb, "Searcher: %s\n", p.Searcher)
	if p.Metric != "" {
		fmt.Fprintf(&sb, "Metric: %s (%s)\n", p.Metric, order)
	}
	fmt.Fprintf(&sb, "Trials: %d, %s\n", p.Trials, concurrent)
	if len(p.Brackets) == 0 {
		return sb.String()
	}
	fmt.Fprintf(&sb, "Each trial trains up to %d %s.\n\n", p.MaxTime, p.TimeMetric)
	w := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "BRACKET\tRUNGS\tTRIALS\tCONCURRENT")
	for i, b := range p.Brackets {
		fmt.Fprintf(w, "%d\t%d\t%d\t%d\n", i+1, b.NumRungs, b.Trials, b.MaxConcurrentTrials)
	}
	w.Flush()
	for i, b := range p.Brackets {
		fmt.Fprintf(&sb, "\nBracket %d\n", i+1)
		w := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
		fmt.Fprintf(w, "RUNG\tTRIALS\t%s\n", strings.ToUpper(p.TimeMetric))
		for k, r := range b.Rungs {
			fmt.Fprintf(w, "%d\t%d\t%d\n", k+1, r.Trials, r.Target)
		}
		w.Flush()
	}
	return sb.String()
}
