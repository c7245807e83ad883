package control_test

import (
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/control"
)

func TestCheckAgentUserGroup(t *testing.T) {
	const base = 2_000_000_000
	ok := resolute.AgentUserGroup{UID: 1001, GID: 1001, User: "ann", Group: "ml-team"}
	tests := map[string]struct {
		change func(*resolute.AgentUserGroup)
		want   string // "" for none
	}{
		"an ordinary account is accepted":                {func(*resolute.AgentUserGroup) {}, ""},
		"names with dots, digits and underscores pass":   {func(g *resolute.AgentUserGroup) { g.User, g.Group = "_svc.ml2", "a-b_c.d" }, ""},
		"the id just below task_uid_base is accepted":    {func(g *resolute.AgentUserGroup) { g.UID = base - 1 }, ""},
		"root's uid is refused":                          {func(g *resolute.AgentUserGroup) { g.UID = 0 }, "agentUid: 0 is root's; tasks never run as root"},
		"root's gid is refused":                          {func(g *resolute.AgentUserGroup) { g.GID = 0 }, "agentGid: 0 is root's; tasks never run as root"},
		"a negative uid is refused":                      {func(g *resolute.AgentUserGroup) { g.UID = -1 }, "agentUid: must be between 1000 and 4294967294 (got -1)"},
		"the kernel's no-id is refused":                  {func(g *resolute.AgentUserGroup) { g.GID = 1<<32 - 1 }, "agentGid: must be between 1000 and 4294967294"},
		"a system account's uid is refused":              {func(g *resolute.AgentUserGroup) { g.UID = 999 }, "agentUid: 999 belongs to the system (ids below 1000)"},
		"a system group is refused":                      {func(g *resolute.AgentUserGroup) { g.GID = 100 }, "agentGid: 100 belongs to the system"},
		"an unlinked user's default id is refused":       {func(g *resolute.AgentUserGroup) { g.UID = base + 7 }, "agentUid: 2000000007 is at or above task_uid_base"},
		"a name with a space is refused":                 {func(g *resolute.AgentUserGroup) { g.User = "ann b" }, `agentUser: use 1-32 letters`},
		"a name starting with a digit is refused":        {func(g *resolute.AgentUserGroup) { g.Group = "1ml" }, `agentGroup: use 1-32 letters`},
		"a name of 33 characters is refused":             {func(g *resolute.AgentUserGroup) { g.User = "a23456789012345678901234567890123" }, "agentUser"},
		"an empty group is refused":                      {func(g *resolute.AgentUserGroup) { g.Group = "" }, `agentGroup: use 1-32 letters`},
		"a name with shell or terminal bytes is refused": {func(g *resolute.AgentUserGroup) { g.User = "a\x1b[2J" }, "agentUser"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := ok
			tc.change(&g)
			err := control.CheckAgentUserGroup(g, base)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (resolute.ErrorCode(err) != resolute.EInvalid || !strings.Contains(resolute.ErrorMessage(err), tc.want)):
				t.Fatalf("error %v, want invalid saying %q", err, tc.want)
			}
		})
	}
}

func TestDefaultTaskUser(t *testing.T) {
	got, err := control.DefaultTaskUser(2_000_000_000, resolute.User{ID: 12, Username: "bo"})
	if want := (resolute.TaskUser{UID: 2_000_000_012, GID: 2_000_000_012, User: "bo", Group: "bo"}); err != nil || got != want {
		t.Fatalf("DefaultTaskUser = %+v, %v; want %+v", got, err, want)
	}
	if _, err := control.DefaultTaskUser(4_000_000_000, resolute.User{ID: 300_000_000, Username: "far"}); resolute.ErrorCode(err) != resolute.EInvalid {
		t.Fatalf("an id past the uid range: %v, want invalid", err)
	}
}
