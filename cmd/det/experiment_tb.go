package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// experimentDeleteTBFilesCmd is Determined's `det experiment
// delete-tb-files ID`.
func (a *app) experimentDeleteTBFilesCmd() *cobra.Command {
	return &cobra.Command{
		Use: "delete-tb-files ID", Short: "Delete the TensorBoard files of an experiment that has ended from its checkpoint storage",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, id, err := a.loginWithID(cmd.Context(), "experiment", argv[0])
			if err != nil {
				return err
			}
			task, err := s.DeleteTensorBoardFiles(cmd.Context(), id)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Deleting the TensorBoard files of experiment %d: task %s (det task logs %s)\n", id, task, task)
			return nil
		},
	}
}
