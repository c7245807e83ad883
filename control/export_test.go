package control

import "context"

// Cycle runs one admission pass, for tests.
func Cycle(x *Admission, ctx context.Context) error { return x.cycle(ctx) }

// CheckpointGCConfig is checkpointGCConfig, for tests.
var CheckpointGCConfig = checkpointGCConfig
