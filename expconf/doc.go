// Package expconf owns experiment and task configurations: it turns the YAML
// that users write for Determined (experiment configs, and the configs of
// commands, notebooks, shells and TensorBoards) into typed Go values with
// defaults applied, validates them with errors that name the field path and
// the YAML line, merges config layers (cluster and pool defaults, template,
// user config, CLI overrides) and renders a fully expanded config back to
// YAML and JSON so it can be stored with an experiment.
//
// The flow for an experiment submission is:
//
//	cfg, err := expconf.ParseExperimentLayers(
//	    [][]byte{poolDefaults, template, userConfig}, overrides)
//
// which merges the layers, parses, applies defaults and checks the keys that
// must be present once everything is merged (see Complete). A single layer,
// such as a template, is checked with ParseExperiment, which allows those
// keys to be missing.
//
// The package is pure: it must not touch the database, the network, HTTP or
// the file system (tests read testdata only), and it must not know about
// resource managers beyond the config keys they read. Callers decide what to
// do with a config; expconf only says whether it is well formed.
package expconf
