package expconf

import (
	"math"
	"math/rand/v2"

	"gopkg.in/yaml.v3"
)

// Checkpoint policies.
const (
	CheckpointPolicyBest = "best"
	CheckpointPolicyAll  = "all"
	CheckpointPolicyNone = "none"
)

// DefaultMaxRestarts is the trial restart budget when max_restarts is unset.
const DefaultMaxRestarts = 5

// ExperimentConfig is an experiment config with every default applied. Get
// one from ParseExperiment or ParseExperimentLayers; render it with YAML or
// JSON to store it with the experiment.
type ExperimentConfig struct {
	Name        string
	Description string
	Labels      []string // default []
	Entrypoint  Entrypoint

	Hyperparameters Hyperparameters // default {}
	Searcher        SearcherConfig  // zero when the layer has no searcher
	Resources       ResourcesConfig
	MaxRestarts     int // default 5

	CheckpointStorage *CheckpointStorageConfig // nil until merged with the master default
	CheckpointPolicy  string                   // best (default), all or none

	Environment EnvironmentConfig
	BindMounts  []BindMount // default []
	// Data is free-form; trials see it as det.get_cluster_info().user_data.
	Data  map[string]any
	Debug bool

	PerformInitialValidation bool
	Profiling                ProfilingConfig
	Reproducibility          ReproducibilityConfig
	// PreemptionTimeout is in seconds; nil means the cluster default (3600).
	PreemptionTimeout *int
	LogPolicies       []LogPolicy // the defaults, merged with the user's by name
	RetentionPolicy   *RetentionPolicy
	Project           string
	Workspace         string
	Integrations      *IntegrationsConfig

	// Deprecated in Determined 0.38 and accepted with a warning; the legacy
	// training loops still read them.
	MinValidationPeriod *Length
	MinCheckpointPeriod *Length
	RecordsPerEpoch     *int
	SchedulingUnit      *int
	Optimizations       map[string]any

	// Warnings lists deprecated or ignored keys, one "path: message" each.
	Warnings []string
}

// ReproducibilityConfig is the `reproducibility` section.
type ReproducibilityConfig struct {
	// ExperimentSeed defaults to a random number (see WithDefaultSeed),
	// kept in the expanded config so the experiment can be run again with
	// it: two searches submitted at once get different hyperparameters.
	ExperimentSeed int64
}

// RetentionPolicy is the `retention_policy` section.
type RetentionPolicy struct {
	LogRetentionDays int // -1 keeps logs for ever
}

// Entrypoint is what a task runs: either one string, run with `sh -c`, or a
// list run as is.
type Entrypoint struct {
	Shell string
	Exec  []string
}

// IsZero reports whether no entrypoint was given.
func (e Entrypoint) IsZero() bool { return e.Shell == "" && len(e.Exec) == 0 }

func (e Entrypoint) render() any {
	if e.Exec != nil {
		return e.Exec
	}
	if e.Shell != "" {
		return e.Shell
	}
	return nil
}

// Option adjusts parsing.
type Option func(*options)

type options struct {
	seed func() uint32
}

// WithDefaultSeed sets where the experiment seed comes from when the config
// sets none (random numbers otherwise), so tests are deterministic.
func WithDefaultSeed(seed func() uint32) Option {
	return func(o *options) { o.seed = seed }
}

func buildOptions(opts []Option) options {
	o := options{seed: rand.Uint32}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// enterpriseKeys are Determined Enterprise Edition keys that Resolute does
// not implement.
var enterpriseKeys = map[string]string{
	"slurm":    "not supported by Resolute (a Determined Enterprise Edition HPC launcher key)",
	"pbs":      "not supported by Resolute (a Determined Enterprise Edition HPC launcher key)",
	"security": "not supported by Resolute (security.kerberos is a Determined Enterprise Edition key)",
}

// ParseExperiment parses one layer of experiment config (a user's file, a
// template) strictly: unknown keys and bad values are errors, reported all
// at once as Errors. Defaults are applied. Keys that only need to be present
// after merging (see Complete) may be missing.
func ParseExperiment(data []byte, opts ...Option) (*ExperimentConfig, error) {
	doc, err := parseDocument(data)
	if err != nil {
		return nil, err
	}
	return decodeExperiment(doc, buildOptions(opts))
}

func decodeExperiment(doc *yaml.Node, opt options) (*ExperimentConfig, error) {
	d := &decoder{}
	o := d.object(doc, "")
	c := &ExperimentConfig{
		Labels:           []string{},
		Hyperparameters:  Hyperparameters{},
		MaxRestarts:      DefaultMaxRestarts,
		CheckpointPolicy: CheckpointPolicyBest,
	}
	o.text("name", &c.Name, "")
	o.text("description", &c.Description, "\n\t")
	if o.has("labels") {
		c.Labels = o.textList("labels")
	}
	o.take("labels")
	c.Entrypoint = d.entrypoint(o)
	if hn := o.take("hyperparameters"); hn != nil {
		c.Hyperparameters = d.hyperparameters(hn, "hyperparameters", 0)
	}
	c.Searcher = d.searcher(o.take("searcher"), c.Hyperparameters)
	c.Resources, _ = d.resources(o.take("resources"), "resources", false)
	if o.integer("max_restarts", &c.MaxRestarts) && c.MaxRestarts < 0 {
		d.fail(o.take("max_restarts"), "max_restarts", "must be 0 or more, got %d", c.MaxRestarts)
	}
	if cn := o.take("checkpoint_storage"); cn != nil {
		c.CheckpointStorage = d.checkpointStorage(cn, "checkpoint_storage")
	}
	if o.str("checkpoint_policy", &c.CheckpointPolicy) {
		d.oneOf(o.take("checkpoint_policy"), "checkpoint_policy", c.CheckpointPolicy,
			CheckpointPolicyBest, CheckpointPolicyAll, CheckpointPolicyNone)
	}
	c.Environment = d.environment(o.take("environment"), "environment")
	c.BindMounts = d.bindMounts(o, "bind_mounts")
	c.Data = o.freeForm("data")
	o.boolean("debug", &c.Debug)
	o.boolean("perform_initial_validation", &c.PerformInitialValidation)
	c.Profiling = d.profiling(o.take("profiling"))
	c.Reproducibility.ExperimentSeed = int64(opt.seed())
	if rn := o.take("reproducibility"); rn != nil {
		ro := d.object(rn, "reproducibility")
		var seed int
		if ro.integer("experiment_seed", &seed) {
			if seed < 0 || seed > math.MaxUint32 {
				d.fail(ro.take("experiment_seed"), "reproducibility.experiment_seed", "must be between 0 and %d, got %d", uint32(math.MaxUint32), seed)
			}
			c.Reproducibility.ExperimentSeed = int64(seed)
		}
		ro.done()
	}
	if c.PreemptionTimeout = o.intPtr("preemption_timeout"); c.PreemptionTimeout != nil && *c.PreemptionTimeout < 0 {
		d.fail(o.take("preemption_timeout"), "preemption_timeout", "must be 0 or more seconds, got %d", *c.PreemptionTimeout)
	}
	c.LogPolicies = d.logPolicies(o)
	if rn := o.take("retention_policy"); rn != nil {
		ro := d.object(rn, "retention_policy")
		rp := &RetentionPolicy{}
		if ro.integer("log_retention_days", &rp.LogRetentionDays) {
			if rp.LogRetentionDays < -1 || rp.LogRetentionDays > 32767 {
				d.fail(rn, "retention_policy.log_retention_days", "must be between -1 and 32767, got %d", rp.LogRetentionDays)
			}
			// Without log_retention_days the section says nothing: the
			// master's retention applies (not 0 days).
			c.RetentionPolicy = rp
		}
		ro.done()
	}
	o.str("project", &c.Project)
	o.str("workspace", &c.Workspace)
	if in := o.take("integrations"); in != nil {
		c.Integrations = d.integrations(in)
	}

	// Deprecated keys: accepted, kept, and warned about.
	if n := o.deprecated("min_validation_period", "deprecated since Determined 0.38; validate from the training code"); n != nil {
		c.MinValidationPeriod = d.length(n, "min_validation_period")
	}
	if n := o.deprecated("min_checkpoint_period", "deprecated since Determined 0.38; checkpoint from the training code"); n != nil {
		c.MinCheckpointPeriod = d.length(n, "min_checkpoint_period")
	}
	if o.has("records_per_epoch") {
		d.warn("records_per_epoch", "deprecated since Determined 0.38 and ignored: the PyTorch trainer counts an epoch from its data loader")
	}
	if c.RecordsPerEpoch = o.intPtr("records_per_epoch"); c.RecordsPerEpoch != nil && *c.RecordsPerEpoch < 0 {
		d.fail(o.take("records_per_epoch"), "records_per_epoch", "must be 0 or more, got %d", *c.RecordsPerEpoch)
	}
	if o.has("scheduling_unit") {
		d.warn("scheduling_unit", "deprecated since Determined 0.38")
	}
	if c.SchedulingUnit = o.intPtr("scheduling_unit"); c.SchedulingUnit != nil && *c.SchedulingUnit < 1 {
		d.fail(o.take("scheduling_unit"), "scheduling_unit", "must be at least 1, got %d", *c.SchedulingUnit)
	}
	if o.has("optimizations") {
		d.warn("optimizations", "deprecated since Determined 0.38; kept for the legacy trial APIs")
	}
	c.Optimizations = o.freeForm("optimizations")
	for _, k := range sortedKeys(c.Optimizations) {
		if k != "aggregation_frequency" {
			d.warn(join("optimizations", k), "ignored: Resolute's PyTorch trainer reads only optimizations.aggregation_frequency")
		}
	}
	o.deprecated("tensorboard_storage", "deprecated and ignored; TensorBoard files are stored with checkpoints")
	if in := o.take("internal"); in != nil {
		d.fail(in, "internal", "not supported: reserved by Determined; must be null")
	}
	for _, key := range sortedKeys(enterpriseKeys) {
		o.reject(key, enterpriseKeys[key])
	}
	o.reject("template", "not supported in a config: templates are chosen when submitting (det --template)")
	o.done()

	c.Warnings = d.warns
	if err := d.errs.errOrNil(); err != nil {
		return nil, err
	}
	return c, nil
}

func (d *decoder) entrypoint(o *object) Entrypoint {
	n := o.take("entrypoint")
	if n == nil {
		return Entrypoint{}
	}
	if n.Kind == yaml.SequenceNode {
		items, _ := d.list(n, "entrypoint")
		args := d.strings(items, "entrypoint")
		if len(args) == 0 {
			d.fail(n, "entrypoint", "must not be empty")
		} else if args[0] == "" {
			d.fail(n, "entrypoint[0]", "must not be empty")
		}
		return Entrypoint{Exec: args}
	}
	s, ok := d.scalarString(n, "entrypoint")
	if ok && s == "" {
		d.fail(n, "entrypoint", "must not be empty")
	}
	return Entrypoint{Shell: s}
}

// Complete checks the keys that may be missing from one layer but must be
// present once all layers are merged: name, entrypoint, searcher (with its
// metric) and checkpoint_storage. A caller that lets users omit the name
// sets one before calling Complete (see GenerateName).
func (c *ExperimentConfig) Complete() error {
	var errs Errors
	req := func(missing bool, path, msg string) {
		if missing {
			errs = append(errs, FieldError{Path: path, Message: msg})
		}
	}
	req(c.Name == "", "name", "required")
	req(c.Entrypoint.IsZero(), "entrypoint", "required")
	req(c.Searcher.Name == "", "searcher", "required")
	req(c.Searcher.Name != "" && c.Searcher.Metric == "", "searcher.metric", "required")
	req(c.CheckpointStorage == nil, "checkpoint_storage", "required (set it in the config or in the master's default)")
	return errs.errOrNil()
}

var (
	nameAdverbs = []string{"boldly", "briskly", "calmly", "deftly", "eagerly", "gently", "keenly", "neatly",
		"nimbly", "quietly", "rapidly", "smartly", "steadily", "swiftly", "warmly", "wisely"}
	nameAdjectives = []string{"amber", "brave", "bright", "clever", "crisp", "fair", "gentle", "grand",
		"lively", "lucid", "noble", "proud", "quick", "sunny", "tidy", "vivid"}
	nameAnimals = []string{"badger", "crane", "falcon", "finch", "heron", "ibex", "lark", "lynx",
		"marten", "otter", "owl", "panda", "puffin", "robin", "stoat", "wren"}
)

// GenerateName returns the name Resolute gives an experiment submitted
// without one, in Determined's style: "Experiment (quietly-brave-otter)".
// n picks the words; callers pass a random number.
func GenerateName(n uint64) string {
	a, b, c := n%16, (n/16)%16, (n/256)%16
	return "Experiment (" + nameAdverbs[a] + "-" + nameAdjectives[b] + "-" + nameAnimals[c] + ")"
}
