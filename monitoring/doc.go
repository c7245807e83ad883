// Package monitoring owns the master's own Prometheus series, served at
// /metrics: the Go runtime, HTTP requests by route pattern, the admission
// loop's cycle time and its queue per pool, allocations by state, slots used
// and total per pool, the rate of metric reports stored, SSE clients, bytes
// through the task proxy, the database's health, per-GPU usage of the local
// resource manager's machine, and the latest system metrics each running
// trial's profiler reported.
//
// It is told things (Observe*, Count*) by the loops that do them and reads
// the rest through the funcs of Sources at scrape time. It must not write
// to the database, decide who may scrape (handlers/prometheus.go does), or
// import anything of ours but the root package.
package monitoring
