package db

import (
	"context"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// CreateTaskSSHKeys stores a shell's SSH keys.
func (q *Queries) CreateTaskSSHKeys(ctx context.Context, k resolute.TaskSSHKeys) error {
	return translate(q.q.CreateTaskSSHKeys(ctx, gen.CreateTaskSSHKeysParams{TaskID: k.TaskID, Login: k.Login,
		PrivateKey: k.PrivateKey, PublicKey: k.PublicKey, HostPrivateKey: k.HostPrivateKey, HostPublicKey: k.HostPublicKey}),
		"SSH keys of task %s", k.TaskID)
}

// TaskSSHKeys returns a shell's SSH keys; a task without them is not_found.
func (q *Queries) TaskSSHKeys(ctx context.Context, taskID string) (resolute.TaskSSHKeys, error) {
	k, err := q.q.TaskSSHKeys(ctx, taskID)
	if err != nil {
		return resolute.TaskSSHKeys{}, translate(err, "SSH keys of task %s", taskID)
	}
	return resolute.TaskSSHKeys{TaskID: k.TaskID, Login: k.Login, PrivateKey: k.PrivateKey, PublicKey: k.PublicKey,
		HostPrivateKey: k.HostPrivateKey, HostPublicKey: k.HostPublicKey}, nil
}
