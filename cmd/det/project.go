package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
)

func (a *app) projectCmd() *cobra.Command {
	cmd := group("project", "Manage projects", "p")
	cmd.AddCommand(a.projectListCmd(), a.projectCreateCmd(), a.projectDescribeCmd(),
		a.projectArchiveCmd("archive", true), a.projectArchiveCmd("unarchive", false),
		a.projectDeleteCmd(), a.projectEditCmd())
	return cmd
}

func projectTable(w io.Writer, list []resolute.Project, withWorkspace bool) error {
	headers := []string{"ID", "Name", "Description", "# Experiments", "Archived"}
	if withWorkspace {
		headers = append([]string{"ID", "Workspace"}, headers[1:]...)
	}
	rows := make([][]string, len(list))
	for i, p := range list {
		row := []string{p.Name, oneLine(p.Description), strconv.Itoa(p.NumExperiments), yesNo(p.Archived)}
		if withWorkspace {
			row = append([]string{p.WorkspaceName}, row...)
		}
		rows[i] = append([]string{strconv.FormatInt(p.ID, 10)}, row...)
	}
	return table(w, headers, rows)
}

// listProjects prints the projects of one workspace, or of every workspace
// (with a workspace column) when workspace is "".
func (a *app) listProjects(cmd *cobra.Command, workspace string, lf listFlags, all bool) error {
	if err := lf.check(); err != nil {
		return err
	}
	ctx := cmd.Context()
	s, err := a.login(ctx)
	if err != nil {
		return err
	}
	var list []resolute.Project
	if workspace == "" {
		list, err = s.Projects(ctx, client.ProjectFilter{Archived: unarchivedUnless(all)})
	} else {
		var ws resolute.Workspace
		if ws, err = s.WorkspaceByName(ctx, workspace); err == nil {
			list, err = s.WorkspaceProjects(ctx, ws.ID, unarchivedUnless(all))
		}
	}
	if err != nil {
		return err
	}
	return printList(a.stdout, lf, list, func(w io.Writer, l []resolute.Project) error { return projectTable(w, l, workspace == "") })
}

func (a *app) projectListCmd() *cobra.Command {
	var all bool
	var lf listFlags
	cmd := &cobra.Command{
		Use:     "list [WORKSPACE_NAME]",
		Aliases: []string{"ls"},
		Short:   "List the projects of a workspace, or of all workspaces",
		Args:    args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			workspace := ""
			if len(args) == 1 {
				workspace = args[0]
			}
			return a.listProjects(cmd, workspace, lf, all)
		},
	}
	lf.add(cmd)
	cmd.Flags().BoolVarP(&all, "all", "a", false, "include archived projects")
	return cmd
}

// findProject resolves a project the way Determined names one: by workspace
// name and project name, or by its numeric id alone.
func findProject(ctx context.Context, s *session, args []string) (resolute.Project, error) {
	if len(args) == 1 {
		id, err := strconv.ParseInt(args[0], 10, 64)
		if err != nil || id <= 0 {
			return resolute.Project{}, usageError{fmt.Errorf("expected WORKSPACE_NAME PROJECT_NAME or a project id, got %q", args[0])}
		}
		return s.Project(ctx, id)
	}
	ws, err := s.WorkspaceByName(ctx, args[0])
	if err != nil {
		return resolute.Project{}, err
	}
	list, err := s.WorkspaceProjects(ctx, ws.ID, nil)
	if err != nil {
		return resolute.Project{}, err
	}
	for _, p := range list {
		if p.Name == args[1] {
			return p, nil
		}
	}
	return resolute.Project{}, resolute.Errorf(resolute.ENotFound, "project %q not found in workspace %q", args[1], ws.Name)
}

// projectArgs: WORKSPACE_NAME PROJECT_NAME, or PROJECT_ID.
var projectArgs = args(cobra.RangeArgs(1, 2))

func (a *app) projectCreateCmd() *cobra.Command {
	var description string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create WORKSPACE_NAME PROJECT_NAME [--description D]",
		Short: "Create a project in a workspace",
		Args:  args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, ws, err := a.loginWorkspace(ctx, args[0])
			if err != nil {
				return err
			}
			p, err := s.CreateProject(ctx, ws.ID, args[1], description)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, p)
			}
			return projectTable(a.stdout, []resolute.Project{p}, true)
		},
	}
	cmd.Flags().StringVar(&description, "description", "", "what the project is for")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) projectDescribeCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "describe WORKSPACE_NAME PROJECT_NAME | PROJECT_ID",
		Short: "Show a project",
		Args:  projectArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			p, err := findProject(cmd.Context(), s, args)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, p)
			}
			return fields(a.stdout, [][2]string{
				{"ID", strconv.FormatInt(p.ID, 10)}, {"Name", p.Name}, {"Description", p.Description},
				{"Workspace", p.WorkspaceName}, {"# Experiments", strconv.Itoa(p.NumExperiments)},
				{"Archived", yesNo(p.Archived)}, {"Owner", p.Username}, {"Created", date(p.CreatedAt)},
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) projectArchiveCmd(verb string, archive bool) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " WORKSPACE_NAME PROJECT_NAME | PROJECT_ID",
		Short: capitalize(verb) + " a project",
		Args:  projectArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			p, err := findProject(ctx, s, args)
			if err != nil {
				return err
			}
			if archive {
				err = s.ArchiveProject(ctx, p.ID)
			} else {
				err = s.UnarchiveProject(ctx, p.ID)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Successfully %sd project %s.\n", verb, p.Name)
			return nil
		},
	}
}

func (a *app) projectDeleteCmd() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete WORKSPACE_NAME PROJECT_NAME | PROJECT_ID [--yes]",
		Short: "Delete an empty project",
		Args:  projectArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			p, err := findProject(ctx, s, args)
			if err != nil {
				return err
			}
			if !yes {
				ok, err := a.confirm(fmt.Sprintf("Delete project %s of workspace %s? This cannot be undone.", p.Name, p.WorkspaceName), "--yes")
				if err != nil || !ok {
					if err == nil {
						fmt.Fprintln(a.stderr, "Aborting deletion of project.")
					}
					return err
				}
			}
			if err := s.DeleteProject(ctx, p.ID); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Successfully deleted project %s.\n", p.Name)
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking")
	return cmd
}

func (a *app) projectEditCmd() *cobra.Command {
	var name, description string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "edit WORKSPACE_NAME PROJECT_NAME | PROJECT_ID [--name N] [--description D]",
		Short: "Rename a project or change its description",
		Args:  projectArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var req resolute.ProjectRequest
			if cmd.Flags().Changed("name") {
				req.Name = &name
			}
			if cmd.Flags().Changed("description") {
				req.Description = &description
			}
			if req.Name == nil && req.Description == nil {
				return usageError{errors.New("nothing to change: give --name or --description")}
			}
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			p, err := findProject(ctx, s, args)
			if err != nil {
				return err
			}
			if p, err = s.PatchProject(ctx, p.ID, req); err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, p)
			}
			return projectTable(a.stdout, []resolute.Project{p}, true)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the project's new name")
	cmd.Flags().StringVar(&description, "description", "", "the project's new description")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
