// Package configkeys is the audit table of every configuration key Resolute
// reads: each key of experiment and task configs (expconf) and of master.yaml
// (masterconf) has its effect, named with the test that proves it, or is
// refused with a message saying it is not supported, named with the test of
// the refusal. Nothing is accepted and silently ignored.
//
// The parsers' own tests (expconf/keyaudit_test.go,
// masterconf/keyaudit_test.go) list the keys they accept, from the parser
// and the Go structs, and fail when one is missing here or an entry here
// names a key they no longer accept; this package's test checks that every
// named test exists and speaks of its key, and that docs/config-keys.md is
// this table rendered (Markdown).
package configkeys

import "strings"

// Status says what Resolute does with a key.
type Status string

// The statuses of a key.
const (
	// Effect: the key does what it says (Test proves it). RefusedOn, when
	// set, names the resource manager that refuses it (RefusalTest proves
	// the refusal).
	Effect Status = "effect"
	// Refused: the key is refused with a message that says it is not
	// supported, and why (Test proves the refusal). For keys with several
	// values, Note says which values are refused.
	Refused Status = "refused"
	// Kept: the key is accepted so that Determined's configs run unchanged,
	// kept with the stored config, and does nothing else here; a warning
	// or a log line says so when it is used (Test proves the warning).
	Kept Status = "kept"
	// Elsewhere: another branch delivers the key's effect (Owner); until it
	// lands here, its table entry says who owns it.
	Elsewhere Status = "elsewhere"
)

// Key is one entry of the table.
type Key struct {
	// Path is the key's dotted path: list items as [], names the user
	// chooses as *, e.g. resources.devices[].host_path or
	// hyperparameters.*.type.
	Path   string
	Status Status
	// Test is the name of the Go test (TestX) or harness Python test
	// (test_x) that proves the effect, the refusal or the warning.
	Test string
	// RefusedOn and RefusalTest: an Effect key that one resource manager
	// refuses at submission or start-up, and the test of that refusal.
	RefusedOn, RefusalTest string
	// Owner is the branch that delivers an Elsewhere key.
	Owner string
	// Note says in a few words what the key does here, for the docs.
	Note string
}

// Covers reports whether the table has an entry for path.
func Covers(table []Key, path string) bool {
	_, ok := Lookup(table, path)
	return ok
}

// Lookup finds path's entry.
func Lookup(table []Key, path string) (Key, bool) {
	for _, k := range table {
		if k.Path == path {
			return k, true
		}
	}
	return Key{}, false
}

// Leaf is the last name of a key's path that is not a placeholder, the
// word a test of the key must mention: "host_path" for
// resources.devices[].host_path, "hyperparameters" for hyperparameters.*.
func Leaf(path string) string {
	parts := strings.Split(strings.ReplaceAll(path, "[]", ""), ".")
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i] != "*" && parts[i] != "" {
			return parts[i]
		}
	}
	return path
}
