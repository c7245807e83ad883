package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
)

// agentStateCmd is `det agent enable|disable (AGENT_ID | --all)`, as
// Determined's (administrators).
func (a *app) agentStateCmd(enable bool) *cobra.Command {
	var all, drain bool
	var lf listFlags
	verb, short := "disable", "Stop placing work on an agent: with --drain what runs there finishes, without it leaves"
	if enable {
		verb, short = "enable", "Let an agent take work again"
	}
	cmd := &cobra.Command{
		Use: verb + " (AGENT_ID | --all)", Short: short + " (administrators)", Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if all == (len(argv) == 1) {
				return usageError{errors.New("must specify exactly one of `--all` or agent_id")}
			}
			if err := lf.check(); err != nil {
				return err
			}
			ctx := cmd.Context()
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			ids := argv
			if all {
				agents, err := s.Agents(ctx)
				if err != nil {
					return err
				}
				for _, ag := range agents {
					ids = append(ids, ag.ID)
				}
			}
			var held []string
			for _, id := range ids {
				var out resolute.AgentStateResponse
				if enable {
					out, err = s.EnableAgent(ctx, id)
				} else {
					out, err = s.DisableAgent(ctx, id, drain)
				}
				if err != nil {
					return err
				}
				held = append(held, out.Allocations...)
				fmt.Fprintf(a.stderr, "%sd agent %s.\n", capitalize(verb), id)
			}
			if !drain {
				return nil
			}
			// When draining, list what still runs there, as Determined does.
			if !lf.asJSON && !lf.csv {
				if len(held) > 0 {
					fmt.Fprintln(a.stdout, "Tasks still in progress on draining nodes.")
				} else {
					fmt.Fprintln(a.stdout, "No tasks in progress on draining nodes.")
				}
			}
			if held == nil {
				held = []string{}
			}
			if lf.asJSON {
				return printJSON(a.stdout, held)
			}
			rows := make([][]string, len(held))
			for i, h := range held {
				rows[i] = []string{h}
			}
			return table(lf.out(a.stdout), []string{"Allocation ID"}, rows)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, verb+" all agents")
	if !enable {
		cmd.Flags().BoolVar(&drain, "drain", false, "enter drain mode, allowing the tasks currently running on the disabled agents to finish; prints them")
		cmd.Flags().BoolVar(&lf.asJSON, "json", false, "print the draining allocations as JSON")
		cmd.Flags().BoolVar(&lf.csv, "csv", false, "print the draining allocations as CSV")
	}
	return cmd
}

// slotStateCmd is `det slot enable|disable AGENT_ID SLOT_ID`, as
// Determined's (administrators), with --drain on disable as its API takes.
func (a *app) slotStateCmd(enable bool) *cobra.Command {
	var drain bool
	verb, short := "disable", "Stop placing work on a slot of an agent: with --drain what holds it finishes, without it leaves"
	if enable {
		verb, short = "enable", "Let a slot of an agent take work again"
	}
	cmd := &cobra.Command{
		Use: verb + " AGENT_ID SLOT_ID", Short: short + " (administrators)", Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			slot, err := strconv.Atoi(argv[1])
			if err != nil || slot < 0 {
				return usageError{fmt.Errorf("slot_id: expected a slot number (det slot list shows them), got %q", argv[1])}
			}
			ctx := cmd.Context()
			s, err := a.login(ctx)
			if err != nil {
				return err
			}
			var out resolute.SlotStateResponse
			if enable {
				out, err = s.EnableSlot(ctx, argv[0], slot)
			} else {
				out, err = s.DisableSlot(ctx, argv[0], slot, drain)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%sd slot %d of agent %s\n", capitalize(verb), slot, argv[0])
			if drain && len(out.Allocations) > 0 {
				fmt.Fprintf(a.stdout, "Still in progress on the draining slot: %s\n", strings.Join(out.Allocations, ", "))
			}
			return nil
		},
	}
	if !enable {
		cmd.Flags().BoolVar(&drain, "drain", false, "enter drain mode, allowing the task currently holding the slot to finish")
	}
	return cmd
}
