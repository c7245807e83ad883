// Package control holds Resolute's business rules, the layer between the
// handlers and the database: how configs are expanded with templates and
// master defaults, and (as they arrive) the state machines of experiments,
// trials and tasks.
//
// Running work is the Runner's, four parts over one shared core (the
// database, resource manager, options, logger and clock): Admission, the
// loop that admits allocations to slots as scheduler.Decide says and hands
// what the resource manager reports to the others; Experiments, the state
// machine of experiments and trials; Tasks, the commands, notebooks, shells
// and TensorBoards; and Queue, the job queue and the pools.
//
// It decides and records; it renders nothing and speaks no HTTP.
package control
