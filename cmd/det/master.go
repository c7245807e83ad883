package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
)

func (a *app) masterCmd() *cobra.Command {
	cmd := group("master", "Show the master's information and logs")
	cmd.AddCommand(a.masterInfoCmd(), a.masterLogsCmd(), a.masterConfigCmd(), a.clusterMessageCmd())
	return cmd
}

func (a *app) masterInfoCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info",
		Short: "Show the master's version and cluster",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			info, err := s.Master(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, info)
			}
			return fields(a.stdout, [][2]string{
				{"Version", info.Version}, {"Cluster ID", info.ClusterID}, {"Cluster Name", info.ClusterName},
				{"Resource Manager", info.ResourceManager}, {"Master Address", a.master},
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) masterLogsCmd() *cobra.Command {
	var follow bool
	var tail int
	cmd := &cobra.Command{
		Use:   "logs [-f] [--tail N]",
		Short: "Print the master's logs (administrators)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tail < 0 {
				return usageError{fmt.Errorf("--tail: must not be negative, got %d", tail)}
			}
			s, err := a.login(cmd.Context())
			if err != nil {
				return err
			}
			return s.MasterLogs(cmd.Context(), follow, tail, func(e resolute.LogEntry) error {
				_, err := fmt.Fprintf(a.stdout, "%s %-5s %s\n", e.Timestamp.Local().Format(time.RFC3339), e.Level, e.Message)
				return err
			})
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new lines until interrupted")
	cmd.Flags().IntVar(&tail, "tail", 0, "print only the last N lines (0: all kept lines)")
	return cmd
}
