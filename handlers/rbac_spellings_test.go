package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
)

// rbacSpellings are TestEveryBodyTakesEitherSpelling's cases of the user
// group and role routes: each body in Determined's camelCase and in the
// proto's snake_case.
func rbacSpellings() map[string]spelled {
	ctx := context.Background()
	adminID := func(t *testing.T, fx *spellingFixture) string {
		u, err := fx.m.DB.UserByUsername(ctx, "admin")
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(u.ID)
	}
	group := func(t *testing.T, fx *spellingFixture, name, members string) map[string]string {
		var g resolute.GroupResponse
		fx.must(t, "POST", "/api/v1/groups", `{"name":"`+name+`","addUsers":[`+members+`]}`, &g)
		return map[string]string{"{group}": fmt.Sprint(g.Group.GroupID), "{uid}": adminID(t, fx)}
	}
	members := func(want int) func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
		return func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
			var g resolute.GroupResponse
			if json.Unmarshal(answer, &g); len(g.Group.Users) != want {
				t.Errorf("answer %s, want %d members", answer, want)
			}
		}
	}
	workspace := func(t *testing.T, fx *spellingFixture, s string) map[string]string {
		var w resolute.WorkspaceResponse
		fx.must(t, "POST", "/api/v1/workspaces", `{"name":"roles-`+s+fmt.Sprint(len(s))+`"}`, &w)
		return map[string]string{"{w}": fmt.Sprint(w.Workspace.ID), "{uid}": adminID(t, fx)}
	}
	viewers := func(want int) func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
		return func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
			var ws int64
			fmt.Sscan(v["{w}"], &ws)
			list, err := fx.m.DB.RoleAssignments(ctx, db.AssignmentFilter{Role: "Viewer", WorkspaceID: &ws})
			if err != nil || len(list) != want {
				t.Errorf("viewers of workspace %d: %+v (%v), want %d", ws, list, err, want)
			}
		}
	}
	viewerIn := func(camel bool) string {
		if camel {
			return `{"userRoleAssignments":[{"userId":{uid},"roleAssignment":{"role":{"roleId":4},"scopeWorkspaceId":{w}}}]}`
		}
		return `{"user_role_assignments":[{"user_id":{uid},"role_assignment":{"role":{"role_id":4},"scope_workspace_id":{w}}}]}`
	}
	return map[string]spelled{
		"a new group with members": {
			route: "POST /api/v1/groups", path: "/api/v1/groups",
			camel: `{"name":"new-{s}","addUsers":[{uid}]}`, snake: `{"name":"new-{s}","add_users":[{uid}]}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				return map[string]string{"{uid}": adminID(t, fx)}
			},
			check: members(1),
		},
		"members added to a group": {
			route: "PUT /api/v1/groups/{groupId}", path: "/api/v1/groups/{group}",
			camel: `{"addUsers":[{uid}]}`, snake: `{"add_users":[{uid}]}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string { return group(t, fx, "put-"+s, "") },
			check: members(1),
		},
		"members removed from a group": {
			route: "PATCH /api/v1/groups/{groupId}", path: "/api/v1/groups/{group}",
			camel: `{"removeUsers":[{uid}]}`, snake: `{"remove_users":[{uid}]}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				return group(t, fx, "patch-"+s, adminID(t, fx))
			},
			check: members(0),
		},
		"the groups of a user": {
			route: "POST /api/v1/groups/search", path: "/api/v1/groups/search",
			camel: `{"userId":{uid},"limit":100}`, snake: `{"user_id":{uid},"limit":100}`,
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				group(t, fx, "not-mine-"+s, "")
				return group(t, fx, "mine-"+s, adminID(t, fx))
			},
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
				if !strings.Contains(string(answer), `"name":"mine-`+v["{s}"]+`"`) || strings.Contains(string(answer), "not-mine") {
					t.Errorf("answer %s", answer)
				}
			},
		},
		"roles by id": {
			route: "POST /api/v1/roles/search/by-ids", path: "/api/v1/roles/search/by-ids",
			camel: `{"roleIds":[4]}`, snake: `{"role_ids":[4]}`,
			check: func(t *testing.T, fx *spellingFixture, v map[string]string, answer []byte) {
				var out resolute.RolesWithAssignmentsResponse
				if json.Unmarshal(answer, &out); len(out.Roles) != 1 || out.Roles[0].Role.Name != "Viewer" {
					t.Errorf("answer %s", answer)
				}
			},
		},
		"a role assigned": {
			route: "POST /api/v1/roles/add-assignments", path: "/api/v1/roles/add-assignments",
			camel: viewerIn(true), snake: viewerIn(false), setup: workspace, check: viewers(1),
		},
		"a role unassigned": {
			route: "POST /api/v1/roles/remove-assignments", path: "/api/v1/roles/remove-assignments",
			camel: viewerIn(true), snake: viewerIn(false),
			setup: func(t *testing.T, fx *spellingFixture, s string) map[string]string {
				v := workspace(t, fx, "un-"+s)
				body := strings.NewReplacer("{uid}", v["{uid}"], "{w}", v["{w}"]).Replace(viewerIn(true))
				fx.must(t, "POST", "/api/v1/roles/add-assignments", body, nil)
				return v
			},
			check: viewers(0),
		},
	}
}
