package main

import (
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
)

func (a *app) agentCmd() *cobra.Command {
	cmd := group("agent", "Show the cluster's machines (Kubernetes nodes) and their slots", "a")
	cmd.AddCommand(a.agentListCmd(), a.agentStateCmd(true), a.agentStateCmd(false))
	return cmd
}

func (a *app) slotCmd() *cobra.Command {
	cmd := group("slot", "Show every slot and what holds it; disable and enable one", "s")
	cmd.AddCommand(a.slotListCmd(), a.slotStateCmd(true), a.slotStateCmd(false))
	return cmd
}

// agents fetches the agents for a list command.
func (a *app) agents(cmd *cobra.Command) ([]resolute.Agent, error) {
	s, err := a.login(cmd.Context())
	if err != nil {
		return nil, err
	}
	return s.Agents(cmd.Context())
}

func (a *app) agentListCmd() *cobra.Command {
	var lf listFlags
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the agents: their pool, slots, and how many are in use",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := lf.check(); err != nil {
				return err
			}
			agents, err := a.agents(cmd)
			if err != nil {
				return err
			}
			return printList(a.stdout, lf, agents, agentTable)
		},
	}
	lf.add(cmd)
	return cmd
}

// agentTable prints an agent a row: slots held by Resolute's allocations
// and by pods it did not start are counted apart.
func agentTable(w io.Writer, agents []resolute.Agent) error {
	rows := make([][]string, len(agents))
	for i, ag := range agents {
		used, other := 0, 0
		for _, s := range ag.Slots {
			switch {
			case s.AllocationID != "" || s.Hidden:
				used++
			case s.Foreign:
				other++
			}
		}
		rows[i] = []string{ag.ID, ag.ResourcePool, strconv.Itoa(len(ag.Slots)), strconv.Itoa(used), strconv.Itoa(other),
			yesNo(ag.Enabled), yesNo(ag.Draining)}
	}
	return table(w, []string{"Agent ID", "Resource Pool", "Slots", "Used", "Used by Other Pods", "Enabled", "Draining"}, rows)
}

func (a *app) slotListCmd() *cobra.Command {
	var lf listFlags
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List every slot of every agent and the allocation holding it",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := lf.check(); err != nil {
				return err
			}
			agents, err := a.agents(cmd)
			if err != nil {
				return err
			}
			var slots []resolute.Slot
			for _, ag := range agents {
				for _, s := range ag.Slots {
					s.Agent = ag.ID
					slots = append(slots, s)
				}
			}
			slots = page(lf, slots)
			if lf.asJSON {
				return printJSON(a.stdout, slots)
			}
			rows := make([][]string, len(slots))
			for i, s := range slots {
				holder := s.AllocationID
				switch {
				case holder == "" && s.Foreign:
					holder = "(another pod)"
				case holder == "" && s.Hidden:
					holder = "(in use)" // another workspace's, under RBAC
				}
				rows[i] = []string{s.Agent, strconv.Itoa(s.ID), yesNo(s.Enabled), yesNo(s.Draining), s.Device, holder}
			}
			return table(lf.out(a.stdout), []string{"Agent ID", "Slot ID", "Enabled", "Draining", "Type", "Allocation"}, rows)
		},
	}
	lf.add(cmd)
	return cmd
}
