package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
)

func (a *app) workspaceCmd() *cobra.Command {
	cmd := group("workspace", "Manage workspaces", "w")
	cmd.AddCommand(a.workspaceListCmd(), a.workspaceCreateCmd(), a.workspaceDescribeCmd(),
		a.workspaceArchiveCmd("archive", true), a.workspaceArchiveCmd("unarchive", false),
		a.workspaceDeleteCmd(), a.workspaceEditCmd(), a.workspaceListProjectsCmd())
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
			list = page(lf, list)
			if lf.asJSON {
				return printJSON(a.stdout, list)
			}
			return workspaceTable(lf.out(a.stdout), list)
		},
	}
	lf.add(cmd)
	cmd.Flags().BoolVarP(&all, "all", "a", false, "include archived workspaces")
	return cmd
}

func workspaceTable(w io.Writer, list []resolute.Workspace) error {
	rows := make([][]string, len(list))
	for i, ws := range list {
		rows[i] = []string{strconv.FormatInt(ws.ID, 10), ws.Name, strconv.Itoa(ws.NumProjects), yesNo(ws.Archived), ws.Username}
	}
	return table(w, []string{"ID", "Name", "# Projects", "Archived", "Owner"}, rows)
}

func (a *app) workspaceCreateCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create WORKSPACE_NAME",
		Short: "Create a workspace",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			ws, err := s.CreateWorkspace(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, ws)
			}
			return workspaceTable(a.stdout, []resolute.Workspace{ws})
		},
	}
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
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			ws, err := s.WorkspaceByName(ctx, args[0])
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
			if err := workspaceTable(a.stdout, []resolute.Workspace{ws}); err != nil {
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
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			ws, err := s.WorkspaceByName(ctx, args[0])
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
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			ws, err := s.WorkspaceByName(ctx, args[0])
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
	cmd := &cobra.Command{
		Use:   "edit WORKSPACE_NAME --name NEW_NAME",
		Short: "Rename a workspace",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if !cmd.Flags().Changed("name") {
				return usageError{fmt.Errorf("nothing to change: give --name")}
			}
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			ws, err := s.WorkspaceByName(ctx, args[0])
			if err != nil {
				return err
			}
			if ws, err = s.RenameWorkspace(ctx, ws.ID, name); err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, ws)
			}
			return workspaceTable(a.stdout, []resolute.Workspace{ws})
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the workspace's new name")
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
