package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/resolute-ml/resolute"
)

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Show the versions of det and of the master",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(a.stdout, "client:\n  version: %s\n", resolute.Version)
			info, err := a.anonymous().Info(cmd.Context())
			if err != nil {
				fmt.Fprintf(a.stderr, "Warning: cannot get the master's version: %s\n", message(err))
				fmt.Fprintf(a.stdout, "master:\n  unreachable: true\nmaster_address: %s\n", a.master)
				return nil
			}
			fmt.Fprintf(a.stdout, "master:\n  cluster_id: %s\n  cluster_name: %s\n  version: %s\nmaster_address: %s\n",
				info.ClusterID, info.ClusterName, info.Version, a.master)
			// The master serves the Python package (SDK, Core API) for pip.
			fmt.Fprintf(a.stdout, "python_sdk: pip install --no-index --find-links %s/python/ determined\n", a.master)
			return nil
		},
	}
}
