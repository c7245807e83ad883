package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
)

func (a *app) userCmd() *cobra.Command {
	// "us" and "use" are prefixes of user-group too; as aliases they stay
	// user's, as before user-group came.
	cmd := group("user", "Manage users and log in", "u", "us", "use")
	cmd.AddCommand(a.userLoginCmd(), a.userLogoutCmd(), a.userWhoamiCmd(), a.userListCmd(),
		a.userCreateCmd(), a.userChangePasswordCmd(), a.userEditCmd(),
		a.userActiveCmd("activate", true), a.userActiveCmd("deactivate", false),
		a.userLinkAgentCmd(), a.userUnlinkAgentCmd())
	return cmd
}

func (a *app) userLoginCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "login [USERNAME]",
		Short: "Log in as a user and make them the active user",
		Long: "Log in as a user and make them the active user of this master.\n\n" +
			"The password is read from $DET_PASS, else typed at the terminal without echo,\n" +
			"else read as one line of stdin. The username defaults to $DET_USER.",
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			username := a.getenv("DET_USER")
			if len(args) == 1 {
				username = args[0]
			}
			var err error
			if username == "" {
				if username, err = a.prompt("Username: "); err != nil {
					return err
				}
			}
			password, err := a.password(fmt.Sprintf("Password for user '%s': ", username))
			if err != nil {
				return err
			}
			resp, err := a.anonymous().Login(cmd.Context(), username, password)
			if err != nil {
				return err
			}
			store, err := loadTokens(a.getenv)
			if err != nil {
				return err
			}
			store.setToken(a.master, resp.User.Username, resp.Token, true)
			return store.save()
		},
	}
}

func (a *app) userLogoutCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "logout",
		Short: "End the active user's session (or -u's)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := loadTokens(a.getenv)
			if err != nil {
				return err
			}
			users := store.users(a.master)
			if !all {
				user, _ := a.sessionUser(store)
				if store.token(a.master, user) == "" {
					return a.notLoggedIn(user)
				}
				users = []string{user}
			}
			for _, u := range users {
				err := a.withToken(store.token(a.master, u)).Logout(cmd.Context())
				// An expired session is as good as ended.
				if err != nil && resolute.ErrorCode(err) != resolute.EUnauthorized {
					return err
				}
				store.drop(a.master, u)
			}
			return store.save()
		},
	}
	cmd.Flags().BoolVarP(&all, "all", "a", false, "end the sessions of every user stored for this master")
	return cmd
}

func (a *app) userWhoamiCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "whoami",
		Short: "Print the user det acts as",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			me, err := s.Me(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "You are logged in as user '%s'\n", me.Username)
			return nil
		},
	}
}

func (a *app) userListCmd() *cobra.Command {
	var all bool
	var lf listFlags
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List active users (--all: inactive ones too)",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := lf.check(); err != nil {
				return err
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			users, err := s.Users(cmd.Context())
			if err != nil {
				return err
			}
			shown := []resolute.User{}
			for _, u := range users {
				if all || u.Active {
					shown = append(shown, u)
				}
			}
			sort.Slice(shown, func(i, j int) bool { return shown[i].Username < shown[j].Username })
			shown = page(lf, shown)
			if lf.asJSON {
				return printJSON(a.stdout, shown)
			}
			rows := make([][]string, len(shown))
			for i, u := range shown {
				rows[i] = []string{strconv.FormatInt(u.ID, 10), u.Username, u.DisplayName, yesNo(u.Admin), yesNo(u.Active)}
			}
			return table(lf.out(a.stdout), []string{"ID", "Username", "Display Name", "Admin", "Active"}, rows)
		},
	}
	lf.add(cmd)
	cmd.Flags().BoolVarP(&all, "all", "a", false, "include inactive users")
	return cmd
}

func (a *app) userCreateCmd() *cobra.Command {
	var admin bool
	var password string
	cmd := &cobra.Command{
		Use:   "create USERNAME",
		Short: "Create a user (administrators)",
		Long: "Create a user. Without --password, det asks for one at a terminal;\n" +
			"elsewhere the user gets no password. An empty password is allowed.",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("password") && a.terminal() {
				if password, err = a.newPassword(args[0]); err != nil {
					return err
				}
			}
			u, err := s.CreateUser(cmd.Context(), resolute.UserSpec{Username: args[0], Admin: admin}, password)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Created user %s (id %d).\n", u.Username, u.ID)
			return nil
		},
	}
	cmd.Flags().BoolVar(&admin, "admin", false, "make the user an administrator")
	cmd.Flags().StringVar(&password, "password", "", "the user's password (other users of this machine can read a command line: leave it out to be asked)")
	return cmd
}

func (a *app) userChangePasswordCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "change-password [USERNAME]",
		Short: "Change your password, or (administrators) set another user's",
		Long: "Change your password, or (administrators) set another user's.\n\n" +
			"At a terminal det asks without echo; otherwise it reads lines from stdin:\n" +
			"your current password then the new one for your own, just the new one for another's.",
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			me, err := s.Me(ctx)
			if err != nil {
				return err
			}
			target := me
			if len(args) == 1 && args[0] != me.Username {
				if target, err = s.UserByName(ctx, args[0]); err != nil {
					return err
				}
			}
			var req resolute.SetPasswordRequest
			if target.ID == me.ID {
				if req.OldPassword, err = a.secret(fmt.Sprintf("Current password for user '%s': ", me.Username)); err != nil {
					return err
				}
			}
			if req.Password, err = a.newPassword(target.Username); err != nil {
				return err
			}
			if err := s.SetPassword(ctx, target.ID, req); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Password changed for user '%s'.\n", target.Username)
			return nil
		},
	}
}

func (a *app) userEditCmd() *cobra.Command {
	var displayName string
	var admin, active bool
	cmd := &cobra.Command{
		Use:   "edit USERNAME [--display-name NAME] [--admin=true|false] [--active=true|false]",
		Short: "Change a user (administrators)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			var req resolute.PatchUserRequest
			f := cmd.Flags()
			if f.Changed("display-name") {
				req.DisplayName = &displayName
			}
			if f.Changed("admin") {
				req.Admin = &admin
			}
			if f.Changed("active") {
				req.Active = &active
			}
			if req == (resolute.PatchUserRequest{}) {
				return usageError{errors.New("nothing to change: give --display-name, --admin or --active")}
			}
			return a.patchUser(cmd, args[0], req)
		},
	}
	cmd.Flags().StringVar(&displayName, "display-name", "", "the name shown for the user")
	cmd.Flags().BoolVar(&admin, "admin", false, "whether the user is an administrator")
	cmd.Flags().BoolVar(&active, "active", false, "whether the user may log in")
	return cmd
}

// userActiveCmd makes Determined's deprecated activate and deactivate.
func (a *app) userActiveCmd(verb string, active bool) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " USERNAME",
		Short: "Deprecated: use `det user edit USERNAME --active=" + strconv.FormatBool(active) + "`",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.patchUser(cmd, args[0], resolute.PatchUserRequest{Active: &active})
		},
	}
}

func (a *app) userLinkAgentCmd() *cobra.Command {
	var g resolute.AgentUserGroup
	cmd := &cobra.Command{
		Use:   "link-with-agent-user USERNAME --agent-uid UID --agent-gid GID --agent-user NAME --agent-group NAME",
		Short: "Run a user's tasks as a Unix user and group (administrators)",
		Long: "Run a user's tasks as a Unix user and group: on this machine the processes' uid and gid,\n" +
			"on Kubernetes the pods' runAsUser and runAsGroup. Tasks started afterwards use it.\n" +
			"Without a link, a user's tasks run as uid and gid task_uid_base + their user id.",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.patchUser(cmd, args[0], resolute.PatchUserRequest{AgentUserGroup: &g})
		},
	}
	f := cmd.Flags()
	f.IntVar(&g.UID, "agent-uid", 0, "the uid the user's tasks run as")
	f.IntVar(&g.GID, "agent-gid", 0, "the gid the user's tasks run as")
	f.StringVar(&g.User, "agent-user", "", "the name of that user (the tasks' USER)")
	f.StringVar(&g.Group, "agent-group", "", "the name of that group")
	for _, name := range []string{"agent-uid", "agent-gid", "agent-user", "agent-group"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

func (a *app) userUnlinkAgentCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "unlink-agent-user USERNAME",
		Short: "Run a user's tasks as their default ids again (administrators)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.patchUser(cmd, args[0], resolute.PatchUserRequest{AgentUserGroup: &resolute.AgentUserGroup{}})
		},
	}
}

func (a *app) patchUser(cmd *cobra.Command, username string, req resolute.PatchUserRequest) error {
	ctx := cmd.Context()
	s, err := a.login(ctx)
	if err != nil {
		return err
	}
	u, err := s.UserByName(ctx, username)
	if err != nil {
		return err
	}
	if u, err = s.PatchUser(ctx, u.ID, req); err != nil {
		return err
	}
	return describeUser(a.stdout, u)
}

func describeUser(w io.Writer, u resolute.User) error {
	rows := [][2]string{{"Username", u.Username}, {"Display Name", u.DisplayName},
		{"Admin", yesNo(u.Admin)}, {"Active", yesNo(u.Active)}}
	if g := u.AgentUserGroup; g != nil {
		rows = append(rows, [2]string{"Agent User", fmt.Sprintf("%s (uid %d), group %s (gid %d)", g.User, g.UID, g.Group, g.GID)})
	} else {
		rows = append(rows, [2]string{"Agent User", "none (tasks run as task_uid_base + user id)"})
	}
	return fields(w, rows)
}
