package k8stest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPathRewriter(t *testing.T) {
	rw := newPathRewriter(map[string]string{
		"/run/determined/workdir": "/tmp/R/rootfs/run/determined/workdir",
		"/run/determined":         "/tmp/R/rootfs/run/determined",
		"/opt/resolute/harness":   "/home/me/harness",
		"/":                       "/ignored",
	})
	for name, tc := range map[string]struct{ in, want string }{
		"a mount path":                            {"/run/determined/workdir", "/tmp/R/rootfs/run/determined/workdir"},
		"a path under the longest prefix":         {"/run/determined/workdir/x.py", "/tmp/R/rootfs/run/determined/workdir/x.py"},
		"a path under a shorter prefix":           {"/run/determined/configmap/a", "/tmp/R/rootfs/run/determined/configmap/a"},
		"paths inside a shell command":            {"cd /run/determined/workdir && python3 /opt/resolute/harness/run.py", "cd /tmp/R/rootfs/run/determined/workdir && python3 /home/me/harness/run.py"},
		"paths in a PATH-like list":               {"/opt/resolute/harness:/usr/lib", "/home/me/harness:/usr/lib"},
		"a flag's value":                          {"--dir=/run/determined", "--dir=/tmp/R/rootfs/run/determined"},
		"only whole components match":             {"/run/determinedX /opt/resolute/harnesses", "/run/determinedX /opt/resolute/harnesses"},
		"a relative path does not match":          {"x/run/determined", "x/run/determined"},
		"unrelated paths stay":                    {"/usr/bin/python3", "/usr/bin/python3"},
		"the root is never a prefix":              {"/etc/hosts", "/etc/hosts"},
		"a rewritten path is not rewritten again": {"/run/determined/workdir/run/determined", "/tmp/R/rootfs/run/determined/workdir/run/determined"},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, rw(tc.in)); diff != "" {
				t.Errorf("rewrite(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestExpandVars(t *testing.T) {
	lookup := envLookup([]string{"A=1", "DIR=/x"})
	for name, tc := range map[string]struct{ in, want string }{
		"a defined variable":              {"$(A)", "1"},
		"variables inside text":           {"cd $(DIR) && echo $(A)", "cd /x && echo 1"},
		"an undefined variable stays":     {"$(B)", "$(B)"},
		"$$ escapes":                      {"$$(A) $$HOME", "$(A) $HOME"},
		"shell variables stay":            {"echo $HOME ${A}", "echo $HOME ${A}"},
		"an unterminated reference stays": {"$(A", "$(A"},
		"a trailing dollar stays":         {"cost: 5$", "cost: 5$"},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, expandVars(tc.in, lookup)); diff != "" {
				t.Errorf("expandVars(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}
