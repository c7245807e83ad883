package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
)

// det user-group and det rbac: Determined's verbs for user groups and role
// assignments.

func (a *app) userGroupCmd() *cobra.Command {
	cmd := group("user-group", "Manage user groups")
	cmd.AddCommand(a.userGroupCreateCmd(), a.userGroupListCmd(), a.userGroupDescribeCmd(),
		a.userGroupMembersCmd("add-user", true), a.userGroupMembersCmd("remove-user", false),
		a.userGroupChangeNameCmd(), a.userGroupDeleteCmd())
	return cmd
}

// userIDs resolves comma-separated usernames to ids.
func userIDs(ctx context.Context, s *client.Client, names string) ([]int64, error) {
	var ids []int64
	for _, n := range strings.Split(names, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		u, err := s.UserByName(ctx, n)
		if err != nil {
			return nil, err
		}
		ids = append(ids, u.ID)
	}
	return ids, nil
}

func (a *app) userGroupCreateCmd() *cobra.Command {
	var addUsers string
	cmd := &cobra.Command{
		Use:   "create GROUP_NAME",
		Short: "Create a user group",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			ids, err := userIDs(cmd.Context(), s.Client, addUsers)
			if err != nil {
				return err
			}
			g, err := s.CreateGroup(cmd.Context(), args[0], ids)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Created user group %q (id %d).\n", g.Name, g.GroupID)
			return nil
		},
	}
	cmd.Flags().StringVar(&addUsers, "add-user", "", "comma-separated usernames to add")
	return cmd
}

func (a *app) userGroupListCmd() *cobra.Command {
	var asJSON bool
	var ofUser string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List user groups (--groups-user-belongs-to USER: that user's)",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			var uid int64
			if ofUser != "" {
				u, err := s.UserByName(cmd.Context(), ofUser)
				if err != nil {
					return err
				}
				uid = u.ID
			}
			list, err := s.Groups(cmd.Context(), uid, "")
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, list)
			}
			rows := make([][]string, len(list))
			for i, g := range list {
				rows[i] = []string{strconv.FormatInt(g.Group.ID, 10), g.Group.Name, strconv.Itoa(g.NumMembers)}
			}
			return table(a.stdout, []string{"Group ID", "Group Name", "# Members"}, rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&ofUser, "groups-user-belongs-to", "", "only the groups of this user")
	return cmd
}

func (a *app) userGroupDescribeCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "describe GROUP_NAME",
		Short: "Show a user group and its members",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			g, err := s.GroupByName(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, g)
			}
			fmt.Fprintf(a.stdout, "Group %q (id %d)\n", g.Name, g.GroupID)
			rows := make([][]string, len(g.Users))
			for i, u := range g.Users {
				rows[i] = []string{strconv.FormatInt(u.ID, 10), u.Username, u.DisplayName}
			}
			return table(a.stdout, []string{"User ID", "Username", "Display Name"}, rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) userGroupMembersCmd(use string, add bool) *cobra.Command {
	short := "Add users (comma-separated) to a user group"
	if !add {
		short = "Remove users (comma-separated) from a user group"
	}
	return &cobra.Command{
		Use:   use + " GROUP_NAME USERNAMES",
		Short: short,
		Args:  args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			g, err := s.GroupByName(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			ids, err := userIDs(cmd.Context(), s.Client, args[1])
			if err != nil {
				return err
			}
			req := resolute.GroupRequest{AddUsers: ids}
			if !add {
				req = resolute.GroupRequest{RemoveUsers: ids}
			}
			_, err = s.UpdateGroup(cmd.Context(), g.GroupID, req)
			return err
		},
	}
}

func (a *app) userGroupChangeNameCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "change-name GROUP_NAME NEW_NAME",
		Short: "Rename a user group",
		Args:  args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			g, err := s.GroupByName(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			_, err = s.UpdateGroup(cmd.Context(), g.GroupID, resolute.GroupRequest{Name: args[1]})
			return err
		},
	}
}

func (a *app) userGroupDeleteCmd() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete GROUP_NAME",
		Short: "Delete a user group (its role assignments too)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			g, err := s.GroupByName(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if !yes {
				ok, err := a.confirm(fmt.Sprintf("Delete user group %q?", g.Name), "--yes")
				if err != nil || !ok {
					return err
				}
			}
			return s.DeleteGroup(cmd.Context(), g.GroupID)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func (a *app) rbacCmd() *cobra.Command {
	cmd := group("rbac", "Roles and their assignments (security.authz.type: rbac)")
	cmd.AddCommand(a.rbacListRolesCmd(), a.rbacDescribeRoleCmd(), a.rbacAssignCmd("assign-role", true),
		a.rbacAssignCmd("unassign-role", false), a.rbacMyPermissionsCmd(), a.rbacListUsersRolesCmd(), a.rbacListGroupsRolesCmd())
	return cmd
}

func (a *app) rbacListRolesCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list-roles",
		Short: "List the roles and their permissions",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			roles, err := s.Roles(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, roles)
			}
			for _, r := range roles {
				scope := "cluster or workspace"
				if !r.ScopeTypeMask.Workspace {
					scope = "cluster-wide only"
				}
				fmt.Fprintf(a.stdout, "%s (id %d, %s)\n", r.Name, r.RoleID, scope)
				for _, p := range r.Permissions {
					fmt.Fprintf(a.stdout, "    %s\n", p.Name)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// assignmentRows are the rows of a table of who holds roles where.
func assignmentRows(roles []resolute.RoleWithAssignments, workspaceName func(int64) string) [][]string {
	var rows [][]string
	for _, r := range roles {
		for _, u := range r.UserRoleAssignments {
			rows = append(rows, []string{r.Role.Name, "user", u.Username, scopeName(u.RoleAssignment, workspaceName)})
		}
		for _, g := range r.GroupRoleAssignments {
			rows = append(rows, []string{r.Role.Name, "group", g.GroupName, scopeName(g.RoleAssignment, workspaceName)})
		}
	}
	return rows
}

func scopeName(s resolute.RoleAssignmentSpec, workspaceName func(int64) string) string {
	if s.ScopeWorkspaceID == nil {
		return "(cluster-wide)"
	}
	return workspaceName(*s.ScopeWorkspaceID)
}

// workspaceNamer names workspaces by id, as far as the caller sees them.
func workspaceNamer(ctx context.Context, s *client.Client) func(int64) string {
	names := map[int64]string{}
	if list, err := s.Workspaces(ctx, client.WorkspaceFilter{}); err == nil {
		for _, w := range list {
			names[w.ID] = w.Name
		}
	}
	return func(id int64) string {
		if n, ok := names[id]; ok {
			return n
		}
		return "workspace " + strconv.FormatInt(id, 10)
	}
}

func (a *app) rbacDescribeRoleCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "describe-role ROLE",
		Short: "Show a role's permissions and who holds it where",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			id, err := roleID(cmd.Context(), s.Client, args[0])
			if err != nil {
				return err
			}
			roles, err := s.RolesByID(cmd.Context(), id)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, roles)
			}
			for _, r := range roles {
				fmt.Fprintf(a.stdout, "%s (id %d)\nPermissions:\n", r.Role.Name, r.Role.RoleID)
				for _, p := range r.Role.Permissions {
					fmt.Fprintf(a.stdout, "    %s\n", p.Name)
				}
			}
			return table(a.stdout, []string{"Role", "Kind", "Name", "Workspace"}, assignmentRows(roles, workspaceNamer(cmd.Context(), s.Client)))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// roleID finds a role by name (or id).
func roleID(ctx context.Context, s *client.Client, name string) (int, error) {
	roles, err := s.Roles(ctx)
	if err != nil {
		return 0, err
	}
	for _, r := range roles {
		if strings.EqualFold(r.Name, name) || strconv.Itoa(r.RoleID) == name {
			return r.RoleID, nil
		}
	}
	return 0, resolute.Errorf(resolute.ENotFound, "there is no role %q; `det rbac list-roles` lists them", name)
}

func (a *app) rbacAssignCmd(use string, grant bool) *cobra.Command {
	var user, grp, workspace string
	short := "Assign a role to a user (-u) or group (-g), cluster-wide or in a workspace (-w)"
	if !grant {
		short = "Unassign a role from a user (-u) or group (-g), cluster-wide or in a workspace (-w)"
	}
	cmd := &cobra.Command{
		Use:   use + " ROLE (-u USER | -g GROUP) [-w WORKSPACE]",
		Short: short,
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			// -u is det's own --user; here, as in Determined, it names the
			// user to assign, and the active session acts.
			if user == "" && cmd.Flags().Changed("user") {
				user, a.userFlag = a.userFlag, ""
			}
			if (user == "") == (grp == "") {
				return usageError{fmt.Errorf("give one of -u USER (--username-to-assign) and -g GROUP (--group-name-to-assign)")}
			}
			ctx := cmd.Context()
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			id, err := roleID(ctx, s.Client, args[0])
			if err != nil {
				return err
			}
			spec := resolute.RoleAssignmentSpec{Role: resolute.RoleRef{RoleID: id}, ScopeCluster: workspace == ""}
			if workspace != "" {
				ws, err := s.WorkspaceByName(ctx, workspace)
				if err != nil {
					return err
				}
				spec.ScopeWorkspaceID = &ws.ID
			}
			var req resolute.AssignRolesRequest
			who := "user " + user
			if user != "" {
				u, err := s.UserByName(ctx, user)
				if err != nil {
					return err
				}
				req.UserRoleAssignments = []resolute.UserRoleAssignment{{UserID: u.ID, RoleAssignment: spec}}
			} else {
				g, err := s.GroupByName(ctx, grp)
				if err != nil {
					return err
				}
				req.GroupRoleAssignments = []resolute.GroupRoleAssignment{{GroupID: g.GroupID, RoleAssignment: spec}}
				who = "group " + grp
			}
			where := "cluster-wide"
			if workspace != "" {
				where = "in workspace " + strconv.Quote(workspace)
			}
			if grant {
				if err := s.AssignRoles(ctx, req); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "Assigned role %s to %s %s.\n", args[0], who, where)
				return nil
			}
			if err := s.UnassignRoles(ctx, req); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Unassigned role %s from %s %s.\n", args[0], who, where)
			return nil
		},
	}
	cmd.Flags().StringVar(&user, "username-to-assign", "", "the user (also -u)")
	cmd.Flags().StringVarP(&grp, "group-name-to-assign", "g", "", "the group")
	cmd.Flags().StringVarP(&workspace, "workspace-name", "w", "", "the workspace (default: cluster-wide)")
	return cmd
}

func (a *app) rbacMyPermissionsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "my-permissions",
		Short: "List the roles you hold, your groups' too, and their permissions",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			sum, err := s.PermissionsSummary(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, sum)
			}
			if sum.AuthzType != "rbac" {
				fmt.Fprintf(a.stdout, "This master's authorization is %s: roles are recorded but decide nothing.\n", sum.AuthzType)
			}
			name := workspaceNamer(cmd.Context(), s.Client)
			for i, r := range sum.Roles {
				var where []string
				if sum.Assignments[i].IsGlobal {
					where = append(where, "cluster-wide")
				}
				for _, ws := range sum.Assignments[i].ScopeWorkspaceIDs {
					where = append(where, name(ws))
				}
				sort.Strings(where[min(1, len(where)):])
				fmt.Fprintf(a.stdout, "%s in %s\n", r.Name, strings.Join(where, ", "))
				for _, p := range r.Permissions {
					fmt.Fprintf(a.stdout, "    %s\n", p.Name)
				}
			}
			if len(sum.Roles) == 0 {
				fmt.Fprintln(a.stdout, "You hold no role.")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// rbacListUsersRolesCmd is `det rbac list-users-roles USERNAME`.
func (a *app) rbacListUsersRolesCmd() *cobra.Command {
	return a.rbacRolesOfCmd("list-users-roles USERNAME", "List the roles assigned to a user (not through groups)",
		func(ctx context.Context, s *session, name string) ([]resolute.RoleWithAssignments, error) {
			u, err := s.UserByName(ctx, name)
			if err != nil {
				return nil, err
			}
			return s.RolesOfUser(ctx, u.ID)
		})
}

// rbacListGroupsRolesCmd is `det rbac list-groups-roles GROUP_NAME`.
func (a *app) rbacListGroupsRolesCmd() *cobra.Command {
	return a.rbacRolesOfCmd("list-groups-roles GROUP_NAME", "List the roles assigned to a group",
		func(ctx context.Context, s *session, name string) ([]resolute.RoleWithAssignments, error) {
			g, err := s.GroupByName(ctx, name)
			if err != nil {
				return nil, err
			}
			return s.RolesOfGroup(ctx, g.GroupID)
		})
}

// rbacRolesOfCmd lists the roles assigned to one user or group, which
// roles finds by the name given.
func (a *app) rbacRolesOfCmd(use, short string, roles func(context.Context, *session, string) ([]resolute.RoleWithAssignments, error)) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			list, err := roles(cmd.Context(), s, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, list)
			}
			return table(a.stdout, []string{"Role", "Kind", "Name", "Workspace"}, assignmentRows(list, workspaceNamer(cmd.Context(), s.Client)))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
