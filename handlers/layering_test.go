package handlers_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// writeVerbs name the database's methods that change state: db/ names
// reads as nouns (Experiment, Workspaces) and changes as verbs.
var writeVerbs = regexp.MustCompile(`^(Create|Set|Delete|Update|Insert|Archive|Unarchive|Add|Remove|Move|Rename|Mark|Register|` +
	`Patch|Put|Post|Upsert|End|Request|Record|Bootstrap|Lock|Write|Copy|Save|Clear|Touch|Reset|Revoke|Grant|Start|Finish|Ack|InTx|Exec)([A-Z]|$)`)

// runnerReads are what handlers may ask the parts of the runner they hold
// (s.queue, s.admission): what they know that is not in the database.
var runnerReads = map[string]map[string]bool{
	"queue": {"Jobs": true, "Pools": true, "ResourcePools": true, "Agents": true,
		"JobsFor": true, "ResourcePoolsFor": true, "AgentsFor": true},
	"admission": {"ShouldPreempt": true, "LastDecision": true},
}

// TestHandlersOnlyReadTheDatabase keeps every change to state in control/:
// handlers may read through db/ (s.db.Experiment, s.db.Workspaces) but
// never call a method of it that writes, nor open a transaction. A change
// belongs in a service method that takes the Actor and asks authz.Can; so
// handlers read the runner (s.queue: the jobs, pools, agents; s.admission:
// preemption) but change nothing through it, and never act as the system.
func TestHandlersOnlyReadTheDatabase(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var found []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			// authz.System
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "authz" && sel.Sel.Name == "System" {
				found = append(found, fset.Position(sel.Pos()).String()+": authz.System (act as the request's actor)")
				return true
			}
			// s.db.<Method>, s.queue.<Method>, s.admission.<Method>
			inner, ok := sel.X.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			reads, runner := runnerReads[inner.Sel.Name]
			if runner && !reads[sel.Sel.Name] || inner.Sel.Name == "db" && writeVerbs.MatchString(sel.Sel.Name) {
				found = append(found, fset.Position(sel.Pos()).String()+": "+inner.Sel.Name+"."+sel.Sel.Name)
			}
			return true
		})
	}
	sort.Strings(found)
	if len(found) > 0 {
		t.Errorf("handlers write to the database directly; move each into a control/ service method:\n%s", strings.Join(found, "\n"))
	}
}
