package expconf

// Searcher names.
const (
	SearcherSingle       = "single"
	SearcherRandom       = "random"
	SearcherGrid         = "grid"
	SearcherAdaptiveASHA = "adaptive_asha"
	SearcherAsyncHalving = "async_halving"
)

// ASHA modes.
const (
	ModeStandard     = "standard"
	ModeAggressive   = "aggressive"
	ModeConservative = "conservative"
)

// SearcherConfig is the `searcher` section after defaults. Fields that do not
// apply to Name are zero.
type SearcherConfig struct {
	Name            string
	Metric          string
	SmallerIsBetter bool // default true

	MaxTrials           int // random, adaptive_asha, async_halving
	MaxConcurrentTrials int // default 16; 0 means no limit

	// adaptive_asha and async_halving: train each trial up to MaxTime units of
	// TimeMetric (a validation metric the trial reports, e.g. "batches").
	MaxTime      int
	TimeMetric   string
	Mode         string // adaptive_asha: standard (default), aggressive, conservative
	Divisor      float64
	MaxRungs     int   // adaptive_asha, default 5
	BracketRungs []int // adaptive_asha, optional
	NumRungs     int   // async_halving

	// Deprecated in Determined 0.38 but accepted: the training length, in
	// batches, records or epochs.
	MaxLength *Length

	SourceTrialID        *int
	SourceCheckpointUUID *string
}

// Length is a training length in one unit, as Determined's deprecated
// `max_length: {batches: N}` and `min_validation_period`; a bare
// `max_length: N` is unitless.
type Length struct {
	Unit  string // batches, records, epochs, or "" for a unitless length
	Units int
}
