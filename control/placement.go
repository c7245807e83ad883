package control

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db"
)

// Where a workspace's work goes and how it runs (Determined's workspace
// settings and resource-pool bindings): the rules are the pure functions
// here; the services and the launches call them with what they loaded.

// RoutePool picks the resource pool of work submitted in a workspace with
// settings ws: the pool its config asks for; else the workspace's default
// (compute for work with slots, aux for zero-slot tasks); else the
// master's default compute or aux pool.
func RoutePool(asked string, aux bool, ws resolute.WorkspaceSettings, compute, auxPool string) string {
	switch {
	case asked != "":
		return asked
	case aux && ws.DefaultAuxPool != "":
		return ws.DefaultAuxPool
	case aux:
		return auxPool
	case ws.DefaultComputePool != "":
		return ws.DefaultComputePool
	}
	return compute
}

// boundTo lists the names of the workspaces pool is bound to; none means
// the pool is everyone's.
func boundTo(pool string, bindings []resolute.PoolBinding) []string {
	var out []string
	for _, b := range bindings {
		if b.PoolName == pool {
			out = append(out, b.WorkspaceName)
		}
	}
	return out
}

// MayUsePool says whether workspace id may use pool: the pool is bound to
// no workspace, or to this one.
func MayUsePool(pool string, id int64, bindings []resolute.PoolBinding) bool {
	bound := false
	for _, b := range bindings {
		if b.PoolName == pool {
			if b.WorkspaceID == id {
				return true
			}
			bound = true
		}
	}
	return !bound
}

// CheckPoolUse refuses pool to workspace w unless it may use it, with a
// message that says to whom the pool belongs.
func CheckPoolUse(pool string, w resolute.Workspace, bindings []resolute.PoolBinding) error {
	if MayUsePool(pool, w.ID, bindings) {
		return nil
	}
	return resolute.Errorf(resolute.EForbidden, "resource pool %q is bound to workspace(s) %s; workspace %q cannot use it (det workspace list-pools %q lists the pools it may use)",
		pool, strings.Join(boundTo(pool, bindings), ", "), w.Name, w.Name)
}

// AvailablePools lists, of pools in their order, those workspace id may use.
func AvailablePools(pools []string, id int64, bindings []resolute.PoolBinding) []string {
	out := []string{}
	for _, p := range pools {
		if MayUsePool(p, id, bindings) {
			out = append(out, p)
		}
	}
	return out
}

// TaskUserIn is what a task of owner u in a workspace with settings ws
// runs as: the workspace's agent user and group when it has them (they win
// over the owner's, as in Determined), else the owner's link, else the
// owner's default ids.
func TaskUserIn(base int, ws resolute.WorkspaceSettings, u resolute.User) (resolute.TaskUser, error) {
	if g := ws.AgentUserGroup; g != nil {
		return resolute.TaskUser{UID: g.UID, GID: g.GID, User: g.User, Group: g.Group, Linked: true}, nil
	}
	return taskUserOf(base, u)
}

// StorageLayer is the config layer a workspace's checkpoint storage adds
// between the master's defaults and the template: nil when it has none.
// Being a layer, the union merge applies: a config that sets storage of
// another type replaces it whole, one of the same type overrides it key by
// key, as Determined merges a workspace's storage into experiment configs.
func StorageLayer(ws resolute.WorkspaceSettings) []byte {
	if ws.CheckpointStorage == nil {
		return nil
	}
	data, err := json.Marshal(map[string]any{"checkpoint_storage": ws.CheckpointStorage})
	if err != nil {
		return nil
	}
	return data
}

// placement is the workspace that work is submitted in, with its settings
// and the pool bindings as the submission's transaction reads them.
type placement struct {
	workspace resolute.Workspace
	settings  resolute.WorkspaceSettings
	bindings  []resolute.PoolBinding
}

// placementOf loads the workspace of project projectID and the bindings;
// the bindings stay as read until q's transaction ends.
func placementOf(ctx context.Context, q *db.Queries, projectID int64) (placement, error) {
	p, err := q.Project(ctx, projectID)
	if err != nil {
		return placement{}, err
	}
	var pl placement
	if pl.workspace, err = q.Workspace(ctx, p.WorkspaceID); err != nil {
		return pl, err
	}
	if pl.settings, err = q.WorkspaceSettings(ctx, p.WorkspaceID); err != nil {
		return pl, err
	}
	if err := q.LockPoolBindingsShared(ctx); err != nil {
		return pl, err
	}
	pl.bindings, err = q.PoolBindings(ctx)
	return pl, err
}

// routePool picks work's pool in pl (RoutePool), checks it exists and
// that pl's workspace may use it.
func (c *core) routePool(pl placement, asked string, aux bool) (string, error) {
	pool := RoutePool(asked, aux, pl.settings, c.opts.ComputePool, c.opts.AuxPool)
	if _, err := c.poolFor(pool); err != nil {
		if asked == "" {
			return "", resolute.Errorf(resolute.EInvalid, "workspace %q: its default pool %q does not exist; the pools are %s",
				pl.workspace.Name, pool, strings.Join(c.poolNames(), ", "))
		}
		return "", err
	}
	return pool, CheckPoolUse(pool, pl.workspace, pl.bindings)
}

// poolNames are the resource pools' names, in the config's order.
func (c *core) poolNames() []string {
	out := make([]string, len(c.opts.Pools))
	for i, p := range c.opts.Pools {
		out[i] = p.Name
	}
	return out
}

// workspaceSettingsOf is the settings of the workspace of project
// projectID, for a launch.
func (c *core) workspaceSettingsOf(ctx context.Context, projectID int64) (resolute.WorkspaceSettings, error) {
	p, err := c.db.Project(ctx, projectID)
	if err != nil {
		return resolute.WorkspaceSettings{}, fmt.Errorf("the task's project: %w", err)
	}
	return c.db.WorkspaceSettings(ctx, p.WorkspaceID)
}

// isDefaultPool says whether pool is one of the master's default pools,
// which every workspace must be able to use.
func (c *core) isDefaultPool(pool string) bool {
	return slices.Contains([]string{c.opts.ComputePool, c.opts.AuxPool}, pool)
}
