package db

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/gen"
)

// Bootstrap makes what every cluster starts with, once: the cluster id, the
// built-in users admin (an administrator) and determined, and the default
// workspace and project. passwordHash is given to the built-in users when
// they are created here ("" = no password); existing users are left alone.
func (db *DB) Bootstrap(ctx context.Context, passwordHash string) error {
	return db.inTx(ctx, func(q *gen.Queries) error {
		if err := q.CreateClusterID(ctx, newUUID()); err != nil {
			return fmt.Errorf("create cluster id: %w", err)
		}
		for _, u := range []struct {
			name  string
			admin bool
		}{{resolute.AdminUsername, true}, {resolute.DeterminedUsername, false}} {
			_, err := q.CreateUserIfMissing(ctx, gen.CreateUserIfMissingParams{Username: u.name, PasswordHash: passwordHash, Admin: u.admin})
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("create user %s: %w", u.name, err)
			}
		}
		admin, err := q.GetUserByUsername(ctx, resolute.AdminUsername)
		if err != nil {
			return fmt.Errorf("read user admin: %w", err)
		}
		ws, err := q.GetWorkspaceByName(ctx, resolute.DefaultWorkspaceName)
		if errors.Is(err, pgx.ErrNoRows) {
			id, err := q.CreateWorkspace(ctx, gen.CreateWorkspaceParams{Name: resolute.DefaultWorkspaceName, UserID: admin.ID, Immutable: true})
			if err != nil {
				return fmt.Errorf("create default workspace: %w", err)
			}
			ws.ID = id
		} else if err != nil {
			return fmt.Errorf("read default workspace: %w", err)
		}
		_, err = q.GetProjectByName(ctx, gen.GetProjectByNameParams{WorkspaceID: ws.ID, Name: resolute.DefaultProjectName})
		if errors.Is(err, pgx.ErrNoRows) {
			_, err = q.CreateProject(ctx, gen.CreateProjectParams{Name: resolute.DefaultProjectName, WorkspaceID: ws.ID, UserID: admin.ID, Immutable: true})
		}
		if err != nil {
			return fmt.Errorf("create default project: %w", err)
		}
		return nil
	})
}

// ClusterID returns the id made at the first start.
func (db *DB) ClusterID(ctx context.Context) (string, error) {
	id, err := db.q.GetClusterID(ctx)
	return id, translate(err, "cluster id")
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
