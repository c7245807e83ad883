package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// resourcePoolCmd is `det resource-pool` (rp): binding pools to
// workspaces, as Determined's `det rp bindings add|remove|replace|
// list-workspaces`, with `bind`, `unbind` and `list-workspaces` as
// shorter names.
func (a *app) resourcePoolCmd() *cobra.Command {
	cmd := group("resource-pool", "Manage resource pools' bindings to workspaces", "rp")
	bindings := group("bindings", "Manage the workspaces a pool is bound to")
	bindings.AddCommand(
		a.poolBindCmd("add", "Bind a pool to workspaces: only they may use it (administrators)", "bound to"),
		a.poolBindCmd("remove", "Unbind a pool from workspaces (administrators)", "unbound from"),
		a.poolBindCmd("replace", "Bind a pool to exactly these workspaces; none: to nobody (administrators)", "bound to exactly"),
		a.poolListWorkspacesCmd())
	cmd.AddCommand(bindings,
		a.poolBindCmd("bind", "Bind a pool to workspaces: only they may use it (administrators)", "bound to"),
		a.poolBindCmd("unbind", "Unbind a pool from workspaces (administrators)", "unbound from"),
		a.poolListWorkspacesCmd())
	return cmd
}

func (a *app) poolBindCmd(verb, short, done string) *cobra.Command {
	atLeast := cobra.MinimumNArgs(2)
	if verb == "replace" {
		atLeast = cobra.MinimumNArgs(1)
	}
	return &cobra.Command{
		Use:   verb + " POOL_NAME WORKSPACE_NAME...",
		Short: short,
		Args:  args(atLeast),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			pool, workspaces := args[0], args[1:]
			switch verb {
			case "add", "bind":
				err = s.BindPool(ctx, pool, workspaces)
			case "remove", "unbind":
				err = s.UnbindPool(ctx, pool, workspaces)
			default:
				err = s.ReplacePoolBindings(ctx, pool, workspaces)
			}
			if err != nil {
				return err
			}
			if len(workspaces) == 0 {
				fmt.Fprintf(a.stdout, "Resource pool %s is bound to no workspace: everyone may use it.\n", pool)
				return nil
			}
			fmt.Fprintf(a.stdout, "Resource pool %s %s %s.\n", pool, done, strings.Join(workspaces, ", "))
			return nil
		},
	}
}

func (a *app) poolListWorkspacesCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list-workspaces POOL_NAME",
		Short: "List the workspaces a pool is bound to",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			b, err := s.PoolBindings(ctx, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, b)
			}
			names := make([]string, len(b))
			for i, x := range b {
				names[i] = x.WorkspaceName
			}
			bound := strings.Join(names, ", ")
			if len(names) == 0 {
				bound = "(none: every workspace may use it)"
			}
			return table(a.stdout, []string{"Resource Pool", "Workspaces"}, [][]string{{args[0], bound}})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
