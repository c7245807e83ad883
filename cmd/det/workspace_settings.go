package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/resolute-ml/resolute"
)

// settingsFlags are Determined's flags of `det workspace create` and
// `edit` for a workspace's settings.
type settingsFlags struct {
	computePool, auxPool   string
	storage, storageFile   string
	uid, gid               int
	agentUser, agentGroup  string
	namespace              string
	autoCreateNamespace    bool
	autoCreateNamespaceAll bool
}

func (f *settingsFlags) add(fs *pflag.FlagSet, withNamespace bool) {
	fs.StringVar(&f.computePool, "default-compute-pool", "", "name of the pool to set as the default compute pool (\"\" for the master's)")
	fs.StringVar(&f.auxPool, "default-aux-pool", "", "name of the pool to set as the default auxiliary pool (\"\" for the master's)")
	fs.StringVar(&f.storage, "checkpoint-storage-config", "", "checkpoint storage config (JSON-formatted string); '{}' removes it")
	fs.StringVar(&f.storageFile, "checkpoint-storage-config-file", "", "checkpoint storage config (path to a YAML or JSON file)")
	fs.IntVar(&f.uid, "agent-uid", 0, "uid the workspace's tasks run as (administrators)")
	fs.IntVar(&f.gid, "agent-gid", 0, "gid the workspace's tasks run as (administrators)")
	fs.StringVar(&f.agentUser, "agent-user", "", "user name the workspace's tasks run as (administrators)")
	fs.StringVar(&f.agentGroup, "agent-group", "", "group name the workspace's tasks run as (administrators)")
	if withNamespace {
		fs.StringVarP(&f.namespace, "namespace", "n", "", "Kubernetes namespace of the workspace's pods (administrators)")
		fs.BoolVar(&f.autoCreateNamespace, "auto-create-namespace", false, "not supported: create the namespace and name it")
		fs.BoolVar(&f.autoCreateNamespaceAll, "auto-create-namespace-all-clusters", false, "not supported: create the namespace and name it")
	}
}

// request reads the flags that were given into a workspace request.
func (f *settingsFlags) request(cmd *cobra.Command) (resolute.WorkspaceRequest, error) {
	var req resolute.WorkspaceRequest
	fl := cmd.Flags()
	if fl.Changed("default-compute-pool") {
		req.DefaultComputePool = &f.computePool
	}
	if fl.Changed("default-aux-pool") {
		req.DefaultAuxPool = &f.auxPool
	}
	if fl.Changed("checkpoint-storage-config") && fl.Changed("checkpoint-storage-config-file") {
		return req, usageError{fmt.Errorf("give --checkpoint-storage-config or --checkpoint-storage-config-file, not both")}
	}
	if fl.Changed("checkpoint-storage-config") {
		m := map[string]any{}
		if err := json.Unmarshal([]byte(f.storage), &m); err != nil {
			return req, usageError{fmt.Errorf("--checkpoint-storage-config: not a JSON object: %v", err)}
		}
		req.CheckpointStorageConfig = &m
	}
	if fl.Changed("checkpoint-storage-config-file") {
		data, err := os.ReadFile(f.storageFile)
		if err != nil {
			return req, err
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(data, &m); err != nil {
			return req, usageError{fmt.Errorf("--checkpoint-storage-config-file: not a YAML or JSON mapping: %v", err)}
		}
		req.CheckpointStorageConfig = &m
	}
	if fl.Changed("agent-uid") || fl.Changed("agent-gid") || fl.Changed("agent-user") || fl.Changed("agent-group") {
		req.AgentUserGroup = &resolute.AgentUserGroup{UID: f.uid, GID: f.gid, User: f.agentUser, Group: f.agentGroup}
	}
	if fl.Lookup("namespace") != nil {
		if f.autoCreateNamespace || f.autoCreateNamespaceAll {
			return req, usageError{fmt.Errorf("--auto-create-namespace: not supported; create the namespace and give --namespace")}
		}
		if fl.Changed("namespace") {
			req.Namespace = &f.namespace
		}
	}
	return req, nil
}

// workspaceSettingsTable is Determined's workspace table: its settings
// beside its name; describe adds the checkpoint storage.
func workspaceSettingsTable(w io.Writer, list []resolute.Workspace, storage bool) error {
	headers := []string{"ID", "Name", "# Projects", "Agent Uid", "Agent Gid", "Agent User", "Agent Group",
		"Default Compute Pool", "Default Aux Pool"}
	if storage {
		headers = append(headers, "Namespace", "Checkpoint Storage Config")
	}
	rows := make([][]string, len(list))
	for i, ws := range list {
		row := []string{strconv.FormatInt(ws.ID, 10), ws.Name, strconv.Itoa(ws.NumProjects), "", "", "", "",
			ws.DefaultComputePool, ws.DefaultAuxPool}
		if g := ws.AgentUserGroup; g != nil {
			row[3], row[4], row[5], row[6] = strconv.Itoa(g.UID), strconv.Itoa(g.GID), g.User, g.Group
		}
		if storage {
			cs := ""
			if ws.CheckpointStorageConfig != nil {
				data, _ := json.Marshal(ws.CheckpointStorageConfig)
				cs = string(data)
			}
			row = append(row, ws.Namespace, cs)
		}
		rows[i] = row
	}
	return table(w, headers, rows)
}

func (a *app) workspaceListPoolsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list-pools WORKSPACE_NAME",
		Short: "List the resource pools a workspace may use",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, ws, err := a.loginWorkspace(ctx, args[0])
			if err != nil {
				return err
			}
			pools, err := s.AvailablePools(ctx, ws.ID)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, pools)
			}
			return table(a.stdout, []string{"Workspace", "Available Resource Pools"}, [][]string{{ws.Name, strings.Join(pools, ", ")}})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// workspaceBindingsCmd is `det workspace bindings set|delete|list`: the
// workspace's Kubernetes namespace.
func (a *app) workspaceBindingsCmd() *cobra.Command {
	cmd := group("bindings", "Manage a workspace's Kubernetes namespace")
	var ns, cluster string
	var auto, autoAll bool
	set := &cobra.Command{
		Use:   "set WORKSPACE_NAME --namespace NAMESPACE",
		Short: "Run the workspace's pods in a Kubernetes namespace (administrators)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if auto || autoAll {
				return usageError{fmt.Errorf("--auto-create-namespace: not supported; create the namespace and give --namespace")}
			}
			if cluster != "" {
				return usageError{fmt.Errorf("--cluster-name: this master has one cluster; leave it out")}
			}
			if ns == "" {
				return usageError{fmt.Errorf("must provide --namespace NAMESPACE")}
			}
			ctx := cmd.Context()
			s, ws, err := a.loginWorkspace(ctx, args[0])
			if err != nil {
				return err
			}
			if _, err := s.SetNamespaceBinding(ctx, ws.ID, ns); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Workspace %s is bound to namespace %s\n", ws.Name, ns)
			return nil
		},
	}
	set.Flags().StringVarP(&ns, "namespace", "n", "", "the Kubernetes namespace")
	set.Flags().StringVar(&cluster, "cluster-name", "", "not supported: this master has one cluster")
	set.Flags().BoolVar(&auto, "auto-create-namespace", false, "not supported")
	set.Flags().BoolVar(&autoAll, "auto-create-namespace-all-clusters", false, "not supported")
	del := &cobra.Command{
		Use:   "delete WORKSPACE_NAME",
		Short: "Run the workspace's pods in their pools' namespaces again (administrators)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, ws, err := a.loginWorkspace(ctx, args[0])
			if err != nil {
				return err
			}
			if err := s.DeleteNamespaceBinding(ctx, ws.ID); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, "Successfully deleted binding.")
			return nil
		},
	}
	list := &cobra.Command{
		Use:   "list WORKSPACE_NAME",
		Short: "Show the workspace's Kubernetes namespace",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, ws, err := a.loginWorkspace(ctx, args[0])
			if err != nil {
				return err
			}
			b, err := s.NamespaceBindings(ctx, ws.ID)
			if err != nil {
				return err
			}
			if len(b) == 0 {
				fmt.Fprintf(a.stdout, "No workspace-namespace bindings for workspace %s\n", ws.Name)
				return nil
			}
			var rows [][]string
			for cluster, nb := range b {
				rows = append(rows, []string{cluster, nb.Namespace})
			}
			return table(a.stdout, []string{"Cluster", "Namespace"}, rows)
		},
	}
	cmd.AddCommand(set, del, list)
	return cmd
}
