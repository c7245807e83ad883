package control

import "context"

// Cycle runs one admission pass, for tests.
func Cycle(x *Admission, ctx context.Context) error { return x.cycle(ctx) }

// GCTaskConfig is gcTaskConfig, for tests.
var GCTaskConfig = gcTaskConfig

// DecideRetry is decideRetry, for tests.
func DecideRetry(active bool, restarts, maxRestarts int, cancelled bool, policy string, excluded, poolAgents []string) (bool, string) {
	return decideRetry(retryFacts{Active: active, Restarts: restarts, MaxRestarts: maxRestarts, RetriesCancelled: cancelled,
		Policy: policy, Excluded: excluded, PoolAgents: poolAgents, Pool: "default"})
}

// WebhookSelects is webhookSelects, for tests.
var WebhookSelects = webhookSelects

// OnMerged has fn told how many reports each of m's merges read.
func (m *SeriesMerger) OnMerged(fn func(int)) { m.merged = fn }
