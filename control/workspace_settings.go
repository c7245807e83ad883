package control

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"slices"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
)

// WorkspaceSettings changes workspaces' settings (default pools,
// checkpoint storage, agent user and group, Kubernetes namespace) and the
// resource pools' bindings to workspaces, as Determined's basic
// authorization allows: pools and storage the workspace's owner or an
// administrator; the agent user, the namespace and the bindings
// administrators only (they decide which Unix ids and which cluster
// resources others' tasks get). Every change is logged with who made it.
type WorkspaceSettings struct {
	db     *db.DB
	c      *core
	logger *slog.Logger
}

// SettingsPatch changes some of a workspace's settings: a nil field is
// left as it is. An empty CheckpointStorage map, an AgentUserGroup of zero
// values and "" clear theirs (Determined's PATCH: `{}` removes storage).
type SettingsPatch struct {
	Name               *string
	DefaultComputePool *string
	DefaultAuxPool     *string
	CheckpointStorage  *map[string]any
	AgentUserGroup     *resolute.AgentUserGroup
	Namespace          *string
}

// empty says whether p changes nothing.
func (p SettingsPatch) empty() bool {
	return p == SettingsPatch{}
}

// namespacePattern is a Kubernetes namespace name (an RFC 1123 label).
var namespacePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// Create adds a workspace owned by the actor with the settings p (its Name
// is the workspace's name), in one transaction: `det workspace create`
// with settings, or the create form.
func (s *WorkspaceSettings) Create(ctx context.Context, a authz.Actor, p SettingsPatch) (resolute.Workspace, error) {
	if p.Name == nil {
		return resolute.Workspace{}, resolute.Errorf(resolute.EInvalid, "name: must not be empty")
	}
	if err := CheckName("name", *p.Name, MaxNameLen); err != nil {
		return resolute.Workspace{}, err
	}
	name := *p.Name
	p.Name = nil
	var changed []string
	w, err := inTx(ctx, s.db, func(q *db.Queries) (resolute.Workspace, error) {
		if err := authz.Can(a, authz.CreateWorkspace, authz.Cluster); err != nil {
			return resolute.Workspace{}, err
		}
		w, err := q.CreateWorkspace(ctx, name, a.UserID())
		if err != nil || p.empty() {
			return w, err
		}
		changed, err = s.apply(ctx, q, a, w, p)
		if err != nil {
			return w, err
		}
		return q.Workspace(ctx, w.ID)
	})
	if err == nil {
		s.logger.Info("workspace created", "workspace", w.Name, "user", a.Username())
		s.logChange(a, w, changed)
	}
	return w, err
}

// Set changes the settings (and the name) of workspace id that p names.
func (s *WorkspaceSettings) Set(ctx context.Context, a authz.Actor, id int64, p SettingsPatch) (resolute.Workspace, error) {
	if p.Name != nil {
		if err := CheckName("name", *p.Name, MaxNameLen); err != nil {
			return resolute.Workspace{}, err
		}
	}
	var changed []string
	w, err := inTx(ctx, s.db, func(q *db.Queries) (resolute.Workspace, error) {
		w, err := q.WorkspaceForUpdate(ctx, id)
		if err != nil {
			return w, err
		}
		if err := authz.Can(a, authz.ChangeWorkspace, authz.Workspace(w)); err != nil {
			return w, err
		}
		if p.Name != nil && *p.Name != w.Name {
			if w.Immutable {
				return w, resolute.Errorf(resolute.EConflict, "the default workspace %q cannot be renamed", w.Name)
			}
			if w, err = q.RenameWorkspace(ctx, id, *p.Name); err != nil {
				return w, err
			}
			changed = append(changed, "name")
		}
		p.Name = nil
		more, err := s.apply(ctx, q, a, w, p)
		if err != nil {
			return w, err
		}
		changed = append(changed, more...)
		return q.Workspace(ctx, id)
	})
	if err == nil {
		s.logChange(a, w, changed)
	}
	return w, err
}

// apply checks and writes p's settings to workspace w, which the caller
// has locked (or just made) and a may change; it returns the names of the
// settings that changed.
func (s *WorkspaceSettings) apply(ctx context.Context, q *db.Queries, a authz.Actor, w resolute.Workspace, p SettingsPatch) ([]string, error) {
	old, err := q.WorkspaceSettings(ctx, w.ID)
	if err != nil {
		return nil, err
	}
	next := old
	var changed []string
	if p.DefaultComputePool != nil || p.DefaultAuxPool != nil {
		if err := q.LockPoolBindingsShared(ctx); err != nil {
			return nil, err
		}
		bindings, err := q.PoolBindings(ctx)
		if err != nil {
			return nil, err
		}
		for _, f := range []struct {
			field string
			v     *string
			dst   *string
		}{{"defaultComputePool", p.DefaultComputePool, &next.DefaultComputePool}, {"defaultAuxPool", p.DefaultAuxPool, &next.DefaultAuxPool}} {
			if f.v == nil || *f.v == *f.dst {
				continue
			}
			if err := s.checkDefaultPool(f.field, *f.v, w, bindings); err != nil {
				return nil, err
			}
			*f.dst = *f.v
			changed = append(changed, f.field)
		}
	}
	if p.CheckpointStorage != nil {
		storage, err := checkWorkspaceStorage(*p.CheckpointStorage, old.CheckpointStorage)
		if err != nil {
			return nil, err
		}
		if !sameJSON(storage, old.CheckpointStorage) {
			next.CheckpointStorage = storage
			changed = append(changed, "checkpointStorageConfig")
		}
	}
	if g := p.AgentUserGroup; g != nil {
		var link *resolute.AgentUserGroup
		if *g != (resolute.AgentUserGroup{}) {
			l := *g
			link = &l
		}
		// Sent back as it is (a client echoing the settings) is no change,
		// and needs no administrator.
		if !sameJSON(link, old.AgentUserGroup) {
			if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
				return nil, resolute.Errorf(resolute.EForbidden, "agentUserGroup: only administrators may set the agent user and group a workspace's tasks run as")
			}
			if link != nil {
				if err := CheckAgentUserGroup(*link, s.c.opts.TaskUIDBase); err != nil {
					return nil, err
				}
			}
			next.AgentUserGroup = link
			changed = append(changed, "agentUserGroup")
		}
	}
	if p.Namespace != nil {
		// Namespace bindings are the cluster's administrators' (Determined:
		// cluster admins), even to clear one that is not there.
		if err := authz.Can(a, authz.Administer, authz.Cluster); err != nil {
			return nil, resolute.Errorf(resolute.EForbidden, "namespace: only administrators may bind a workspace to a Kubernetes namespace")
		}
	}
	if p.Namespace != nil && *p.Namespace != old.Namespace {
		if err := s.checkNamespace(*p.Namespace); err != nil {
			return nil, err
		}
		next.Namespace = *p.Namespace
		changed = append(changed, "namespace")
	}
	if len(changed) == 0 {
		return nil, nil
	}
	return changed, q.SetWorkspaceSettings(ctx, w.ID, next)
}

// checkDefaultPool checks a default pool a workspace is given: "" (the
// master's), or a pool that exists and the workspace may use.
func (s *WorkspaceSettings) checkDefaultPool(field, pool string, w resolute.Workspace, bindings []resolute.PoolBinding) error {
	if pool == "" {
		return nil
	}
	if !slices.Contains(s.c.poolNames(), pool) {
		return resolute.Errorf(resolute.EInvalid, "%s: pool %q does not exist; the pools are %s", field, pool, strings.Join(s.c.poolNames(), ", "))
	}
	if !MayUsePool(pool, w.ID, bindings) {
		return resolute.Errorf(resolute.EInvalid, "%s: pool %q is bound to workspace(s) %s, not to %q",
			field, pool, strings.Join(boundTo(pool, bindings), ", "), w.Name)
	}
	return nil
}

// checkNamespace checks a workspace's Kubernetes namespace: "" (none), or
// a namespace name where the resource manager has namespaces.
func (s *WorkspaceSettings) checkNamespace(ns string) error {
	switch {
	case ns == "":
		return nil
	case !s.c.opts.Namespaces:
		return resolute.Errorf(resolute.EInvalid, "namespace: this master's resource manager runs no Kubernetes pods; a workspace's namespace is for the kubernetes resource manager")
	case !namespacePattern.MatchString(ns):
		return resolute.Errorf(resolute.EInvalid, "namespace: %q is not a Kubernetes namespace name (1-63 lowercase letters, digits or '-', starting and ending with a letter or digit)", ns)
	}
	return nil
}

// checkWorkspaceStorage checks a workspace's checkpoint storage as
// experiment configs read it; an empty one clears it. A secret given as
// the mask (the settings as shown, sent back) keeps the one stored, when
// the storage is still of the same type.
func checkWorkspaceStorage(storage, old map[string]any) (map[string]any, error) {
	if len(storage) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(storage))
	for k, v := range storage {
		if v == resolute.Masked && resolute.IsStorageSecret(k) {
			prev, ok := old[k]
			if !ok || old["type"] != storage["type"] {
				return nil, resolute.Errorf(resolute.EInvalid, "checkpointStorageConfig.%s: %q is the mask of a secret, not a secret; give the secret", k, resolute.Masked)
			}
			v = prev
		}
		out[k] = v
	}
	if _, err := expconf.MasterDefaults(out, nil); err != nil {
		msg := strings.ReplaceAll(resolute.ErrorMessage(err), "checkpoint_storage", "checkpointStorageConfig")
		if !strings.HasPrefix(msg, "checkpointStorageConfig") {
			msg = "checkpointStorageConfig: " + msg
		}
		return nil, resolute.Errorf(resolute.EInvalid, "%s", msg)
	}
	return out, nil
}

// sameJSON says whether a and b read the same as JSON (a map decoded from
// YAML and one from JSON may hold different number types).
func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// logChange says in the master's log who changed which settings of w.
func (s *WorkspaceSettings) logChange(a authz.Actor, w resolute.Workspace, changed []string) {
	if len(changed) == 0 {
		return
	}
	attrs := []any{"workspace", w.Name, "workspace_id", w.ID, "changed", strings.Join(changed, ","), "by", a.Username()}
	if slices.Contains(changed, "agentUserGroup") {
		if g := w.AgentUserGroup; g != nil {
			attrs = append(attrs, "agent_uid", g.UID, "agent_gid", g.GID, "agent_user", g.User, "agent_group", g.Group)
		} else {
			attrs = append(attrs, "agent_user", "(none: each owner's)")
		}
	}
	if slices.Contains(changed, "namespace") {
		attrs = append(attrs, "namespace", w.Namespace)
	}
	for _, f := range []struct{ name, v string }{{"defaultComputePool", w.DefaultComputePool}, {"defaultAuxPool", w.DefaultAuxPool}} {
		if slices.Contains(changed, f.name) {
			attrs = append(attrs, f.name, f.v)
		}
	}
	s.logger.Info("workspace settings changed", attrs...)
}

// PatchOf reads a workspace request of the API as a settings patch:
// Determined's PATCH names for the pools, and a namespace given in
// clusterNamespaceMeta. What Resolute does not do is refused, never
// ignored: namespaces made on demand, resource quotas, other clusters.
func PatchOf(req resolute.WorkspaceRequest) (SettingsPatch, error) {
	p := SettingsPatch{Name: req.Name, DefaultComputePool: req.DefaultComputePool, DefaultAuxPool: req.DefaultAuxPool,
		CheckpointStorage: req.CheckpointStorageConfig, AgentUserGroup: req.AgentUserGroup, Namespace: req.Namespace}
	if p.DefaultComputePool == nil {
		p.DefaultComputePool = req.DefaultComputeResourcePool
	}
	if p.DefaultAuxPool == nil {
		p.DefaultAuxPool = req.DefaultAuxResourcePool
	}
	if len(req.ClusterNamespaceMeta) > 0 {
		ns, err := NamespaceOf(req.ClusterNamespaceMeta)
		if err != nil {
			return p, err
		}
		if p.Namespace != nil && *p.Namespace != ns {
			return p, resolute.Errorf(resolute.EInvalid, "namespace and clusterNamespaceMeta: give one")
		}
		p.Namespace = &ns
	}
	return p, nil
}

// NamespaceOf reads the namespace of Determined's clusterNamespaceMeta:
// one entry, for this master's cluster ("" or no clusterName), naming a
// namespace that exists.
func NamespaceOf(meta map[string]resolute.WorkspaceNamespaceMeta) (string, error) {
	if len(meta) != 1 {
		return "", resolute.Errorf(resolute.EInvalid, "clusterNamespaceMeta: this master has one cluster; give one entry, keyed \"\"")
	}
	for cluster, m := range meta {
		switch {
		case cluster != "" || m.ClusterName != "":
			return "", resolute.Errorf(resolute.EInvalid, "clusterNamespaceMeta: cluster %q: this master has one cluster; leave the cluster name out", cluster+m.ClusterName)
		case m.AutoCreateNamespace || m.AutoCreateNamespaceAllClusters:
			return "", resolute.Errorf(resolute.EInvalid, "clusterNamespaceMeta.autoCreateNamespace: not supported; create the namespace (and the Role the master needs there) yourself and name it")
		case m.ResourceQuota != nil:
			return "", resolute.Errorf(resolute.EInvalid, "clusterNamespaceMeta.resourceQuota: not supported; set a ResourceQuota in the namespace yourself")
		case m.Namespace == "":
			return "", resolute.Errorf(resolute.EInvalid, "clusterNamespaceMeta.namespace: name the namespace")
		}
		return m.Namespace, nil
	}
	return "", nil
}

// SettingsDefaults is what a workspace without settings gets: the master's
// default pools; Namespaces says whether workspaces may name Kubernetes
// namespaces (the resource manager is Kubernetes').
type SettingsDefaults struct {
	ComputePool, AuxPool string
	Namespaces           bool
}

// Defaults returns the master's defaults for the settings form.
func (s *WorkspaceSettings) Defaults() SettingsDefaults {
	return SettingsDefaults{ComputePool: s.c.opts.ComputePool, AuxPool: s.c.opts.AuxPool, Namespaces: s.c.opts.Namespaces}
}
