package control

import "context"

// Cycle runs one admission pass, for tests.
func Cycle(x *Admission, ctx context.Context) error { return x.cycle(ctx) }

// GCTaskConfig is gcTaskConfig, for tests.
var GCTaskConfig = gcTaskConfig
