package resolute

// WorkspaceRequest is the body of POST /api/v1/workspaces and PATCH
// /api/v1/workspaces/{id}, under Determined's names (PostWorkspaceRequest,
// PatchWorkspace): a field left out is left as it is. An empty
// checkpointStorageConfig ({}) and an agentUserGroup of zero values clear
// theirs. PATCH's defaultComputeResourcePool and defaultAuxResourcePool
// (Determined's PATCH names) mean defaultComputePool and defaultAuxPool.
type WorkspaceRequest struct {
	Name                       *string         `json:"name,omitempty"`
	DefaultComputePool         *string         `json:"defaultComputePool,omitempty"`
	DefaultAuxPool             *string         `json:"defaultAuxPool,omitempty"`
	DefaultComputeResourcePool *string         `json:"defaultComputeResourcePool,omitempty"`
	DefaultAuxResourcePool     *string         `json:"defaultAuxResourcePool,omitempty"`
	CheckpointStorageConfig    *map[string]any `json:"checkpointStorageConfig,omitempty"`
	AgentUserGroup             *AgentUserGroup `json:"agentUserGroup,omitempty"`
	// Namespace is the workspace's Kubernetes namespace ("" none); POST
	// may give it as Determined does, in clusterNamespaceMeta.
	Namespace            *string                           `json:"namespace,omitempty"`
	ClusterNamespaceMeta map[string]WorkspaceNamespaceMeta `json:"clusterNamespaceMeta,omitempty"`
}

// WorkspaceNamespaceMeta is a workspace's namespace on one cluster
// (Determined's; Resolute's master has one cluster, named "").
type WorkspaceNamespaceMeta struct {
	Namespace                      string `json:"namespace,omitempty"`
	ClusterName                    string `json:"clusterName,omitempty"`
	AutoCreateNamespace            bool   `json:"autoCreateNamespace,omitempty"`
	AutoCreateNamespaceAllClusters bool   `json:"autoCreateNamespaceAllClusters,omitempty"`
	ResourceQuota                  *int   `json:"resourceQuota,omitempty"`
}

// SetNamespaceBindingsRequest is the body of POST
// /api/v1/workspaces/{id}/namespace-bindings.
type SetNamespaceBindingsRequest struct {
	WorkspaceID          int64                             `json:"workspaceId,omitempty"`
	ClusterNamespaceMeta map[string]WorkspaceNamespaceMeta `json:"clusterNamespaceMeta"`
}

// WorkspaceNamespaceBinding is a workspace's namespace on a cluster.
type WorkspaceNamespaceBinding struct {
	WorkspaceID int64  `json:"workspaceId"`
	ClusterName string `json:"clusterName"`
	Namespace   string `json:"namespace"`
}

// NamespaceBindingsResponse answers the namespace-binding routes: the
// workspace's namespace by cluster name ("" for this master's).
type NamespaceBindingsResponse struct {
	NamespaceBindings map[string]WorkspaceNamespaceBinding `json:"namespaceBindings"`
}

// PoolBindingsRequest is the body of POST, PUT and DELETE
// /api/v1/resource-pools/{name}/workspace-bindings (Determined's
// BindRPToWorkspaceRequest): workspaces by id or by name.
type PoolBindingsRequest struct {
	ResourcePoolName string   `json:"resourcePoolName,omitempty"`
	WorkspaceIDs     []int64  `json:"workspaceIds,omitempty"`
	WorkspaceNames   []string `json:"workspaceNames,omitempty"`
}

// PoolBindingsResponse answers GET
// /api/v1/resource-pools/{name}/workspace-bindings: the workspaces the
// pool is bound to (none: everyone's).
type PoolBindingsResponse struct {
	WorkspaceIDs []int64       `json:"workspaceIds"`
	Bindings     []PoolBinding `json:"bindings"`
}

// AvailablePoolsResponse answers GET
// /api/v1/workspaces/{id}/available-resource-pools: the pools the
// workspace may use.
type AvailablePoolsResponse struct {
	ResourcePools []string `json:"resourcePools"`
}
