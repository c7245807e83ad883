// Package control holds Resolute's business rules, the layer between the
// handlers and the database: how configs are expanded with templates and
// master defaults, and (as they arrive) the state machines of experiments,
// trials and tasks.
//
// It decides and records; it renders nothing and speaks no HTTP.
package control
