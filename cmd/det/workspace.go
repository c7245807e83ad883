package main

import (
	"fmt"
	"io"
	"reflect"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
)

func (a *app) workspaceCmd() *cobra.Command {
	cmd := group("workspace", "Manage workspaces", "w")
	cmd.AddCommand(a.workspaceListCmd(), a.workspaceCreateCmd(), a.workspaceDescribeCmd(),
		a.workspaceArchiveCmd("archive", true), a.workspaceArchiveCmd("unarchive", false),
		a.workspaceDeleteCmd(), a.workspaceEditCmd(), a.workspaceListProjectsCmd(), a.workspaceListPoolsCmd(),
		a.workspaceBindingsCmd())
	return cmd
}

// unarchivedUnless is the archived filter of list commands: unarchived only,
// or everything with --all.
func unarchivedUnless(all bool) *bool {
	if all {
		return nil
	}
	f := false
	return &f
}

func (a *app) workspaceListCmd() *cobra.Command {
	var all bool
	var lf listFlags
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List workspaces (--all: archived ones too)",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := lf.check(); err != nil {
				return err
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			list, err := s.Workspaces(cmd.Context(), client.WorkspaceFilter{Archived: unarchivedUnless(all)})
			if err != nil {
				return err
			}
			return printList(a.stdout, lf, list, func(w io.Writer, l []resolute.Workspace) error { return workspaceSettingsTable(w, l, false) })
		},
	}
	lf.add(cmd)
	cmd.Flags().BoolVarP(&all, "all", "a", false, "include archived workspaces")
	return cmd
}

func (a *app) workspaceCreateCmd() *cobra.Command {
	var asJSON bool
	var f settingsFlags
	cmd := &cobra.Command{
		Use:   "create WORKSPACE_NAME [--default-compute-pool P] [--checkpoint-storage-config JSON] [--agent-uid N ...] [--namespace NS]",
		Short: "Create a workspace, with its settings",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := f.request(cmd)
			if err != nil {
				return err
			}
			req.Name = &args[0]
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			ws, err := s.CreateWorkspaceWith(cmd.Context(), req)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, ws)
			}
			if err := workspaceSettingsTable(a.stdout, []resolute.Workspace{ws}, false); err != nil {
				return err
			}
			if ws.Namespace != "" {
				fmt.Fprintf(a.stdout, "Workspace %s is bound to namespace %s\n", ws.Name, ws.Namespace)
			}
			return nil
		},
	}
	f.add(cmd.Flags(), true)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) workspaceDescribeCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "describe WORKSPACE_NAME",
		Short: "Show a workspace and its projects",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, ws, err := a.loginWorkspace(ctx, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, ws)
			}
			projects, err := s.WorkspaceProjects(ctx, ws.ID, nil)
			if err != nil {
				return err
			}
			if err := workspaceSettingsTable(a.stdout, []resolute.Workspace{ws}, true); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, "\nAssociated Projects")
			return projectTable(a.stdout, projects, false)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) workspaceArchiveCmd(verb string, archive bool) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " WORKSPACE_NAME",
		Short: verb[:1] + "rchive a workspace",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, ws, err := a.loginWorkspace(ctx, args[0])
			if err != nil {
				return err
			}
			if archive {
				err = s.ArchiveWorkspace(ctx, ws.ID)
			} else {
				err = s.UnarchiveWorkspace(ctx, ws.ID)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Successfully %sd workspace %s.\n", verb, ws.Name)
			return nil
		},
	}
}

func (a *app) workspaceDeleteCmd() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete WORKSPACE_NAME [--yes]",
		Short: "Delete an empty workspace",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, ws, err := a.loginWorkspace(ctx, args[0])
			if err != nil {
				return err
			}
			if !yes {
				ok, err := a.confirm(fmt.Sprintf("Delete workspace %s? This cannot be undone.", ws.Name), "--yes")
				if err != nil || !ok {
					if err == nil {
						fmt.Fprintln(a.stderr, "Aborting deletion of workspace.")
					}
					return err
				}
			}
			if err := s.DeleteWorkspace(ctx, ws.ID); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Successfully deleted workspace %s.\n", ws.Name)
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking")
	return cmd
}

func (a *app) workspaceEditCmd() *cobra.Command {
	var name string
	var asJSON bool
	var f settingsFlags
	cmd := &cobra.Command{
		Use:   "edit WORKSPACE_NAME [--name NEW_NAME] [--default-compute-pool P] [--checkpoint-storage-config JSON] [--agent-uid N ...]",
		Short: "Rename a workspace or change its settings",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			req, err := f.request(cmd)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("name") {
				req.Name = &name
			}
			if reflect.ValueOf(req).IsZero() {
				return usageError{fmt.Errorf("nothing to change: give --name or a setting (see --help)")}
			}
			s, ws, err := a.loginWorkspace(ctx, args[0])
			if err != nil {
				return err
			}
			if ws, err = s.PatchWorkspace(ctx, ws.ID, req); err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, ws)
			}
			return workspaceSettingsTable(a.stdout, []resolute.Workspace{ws}, false)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the workspace's new name")
	f.add(cmd.Flags(), false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) workspaceListProjectsCmd() *cobra.Command {
	var all bool
	var lf listFlags
	cmd := &cobra.Command{
		Use:   "list-projects WORKSPACE_NAME",
		Short: "List the projects of a workspace",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.listProjects(cmd, args[0], lf, all)
		},
	}
	lf.add(cmd)
	cmd.Flags().BoolVarP(&all, "all", "a", false, "include archived projects")
	return cmd
}
