package configkeys

import (
	"fmt"
	"strings"
)

// Markdown renders the tables as docs/config-keys.md.
func Markdown() string {
	var b strings.Builder
	b.WriteString(`# Configuration keys

Every key Resolute reads, and what it does here. A key either has its effect
(the test that proves it is named), is refused with a message saying it is
not supported, or, kept only so that Determined's configs run unchanged, warns
that it does nothing. None is accepted and silently ignored. This page is
generated from the audit table in ` + "`configkeys/`" + ` (run
` + "`CONFIGKEYS_WRITE_DOCS=1 go test ./configkeys`" + ` after changing it); the parsers'
tests fail when a key they accept is missing from it.

Statuses: **effect** (on every resource manager unless *refused on* says
otherwise), **refused** (at submission, or at start-up for master.yaml),
**kept** (stored with the config, with a warning or log line, no effect),
**elsewhere** (delivered on another branch, named).

`)
	section := func(title string, table []Key) {
		fmt.Fprintf(&b, "## %s\n\n| Key | Status | Refused on | What it does here | Test |\n|---|---|---|---|---|\n", title)
		for _, k := range table {
			test := k.Test
			if k.Status == Elsewhere {
				test = "branch " + k.Owner
			}
			if k.RefusalTest != "" {
				test += ", " + k.RefusalTest
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.Path, k.Status, k.RefusedOn,
				strings.ReplaceAll(k.Note, "|", "\\|"), test)
		}
		b.WriteString("\n")
	}
	section("Experiment and task configs", Experiment)
	section("master.yaml", Master)
	return b.String()
}
