// Package resolute holds the domain types shared by every other package of
// Resolute: users, workspaces, projects, and the one Error type with codes.
//
// It imports nothing of ours. Packages that wrap a dependency (db, local, k8s,
// handlers) translate to and from these types at their boundary.
package resolute
