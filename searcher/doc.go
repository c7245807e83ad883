// Package searcher decides which trials of a hyperparameter search to create
// and which to stop: single, random, grid, adaptive_asha and async_halving,
// with the behaviour of Determined 0.38 (master/pkg/searcher) so that its
// users' searches create, promote and stop the same trials.
//
// A Searcher is event-driven and pure. The caller (control/) feeds it events —
// Initial, ValidationReported, TrialExited — and carries out the Actions it
// returns: Create a trial, Stop a trial, Shutdown the experiment. The searcher
// names trials by its own sequential RequestID; the caller maps request IDs to
// the trial IDs the database hands out and persists Snapshot() after each
// event so that Restore continues the same search after a master restart.
//
// Given the same configuration, seed and events, a Searcher returns the same
// actions and the same hyperparameters: all randomness comes from one PCG
// generator seeded from the experiment seed and saved in the snapshot.
//
// The package must not touch a database, the clock, the network, files or
// goroutines, and must not log: it owns decisions only. It imports expconf for
// configuration and the root package for errors, nothing else of ours.
package searcher
