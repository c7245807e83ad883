package views

import "github.com/resolute-ml/resolute"

// WorkspaceSettingsPage is a workspace's settings page: its default pools,
// checkpoint storage, agent user and namespace, as a form.
type WorkspaceSettingsPage struct {
	Shell     Shell
	Workspace resolute.Workspace
	Form      WorkspaceSettingsForm
	Errors    FormErrors
	// Pools are the pools the workspace may use; BoundHere those bound to
	// it (only it and others bound there may use them).
	Pools, BoundHere []string
	// ComputePool and AuxPool are the master's defaults.
	ComputePool, AuxPool string
	// CanAdminister shows the administrators' fields (agent user,
	// namespace) as editable.
	CanAdminister bool
	// Namespaces says the resource manager is Kubernetes', where the
	// namespace field means something.
	Namespaces bool
}

// WorkspaceSettingsForm is the settings form's fields as entered.
type WorkspaceSettingsForm struct {
	DefaultComputePool, DefaultAuxPool string
	// CheckpointStorage is YAML, secrets masked.
	CheckpointStorage string
	Agent             AgentUserForm
	Namespace         string
}

// joinNames lists names for a sentence: "a, b and c"; "none" for none.
func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return "no pool"
	case 1:
		return names[0]
	}
	out := names[0]
	for _, n := range names[1 : len(names)-1] {
		out += ", " + n
	}
	return out + " and " + names[len(names)-1]
}

// containsName says whether names holds name.
func containsName(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}
