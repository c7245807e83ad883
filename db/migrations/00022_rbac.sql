-- +goose Up
-- User groups and role assignments (security.authz.type: rbac). A role is
-- one of the built-in ones authz/roles.go defines, by name; an assignment
-- gives it to a user or to a group, cluster-wide (workspace_id NULL) or in
-- one workspace. Under basic authorization nothing reads these tables.
CREATE TABLE user_groups (
    id         bigserial PRIMARY KEY,
    name       text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE user_group_members (
    group_id bigint NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
    user_id  bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX user_group_members_by_user ON user_group_members (user_id);

CREATE TABLE role_assignments (
    id           bigserial PRIMARY KEY,
    role         text NOT NULL,
    user_id      bigint REFERENCES users (id) ON DELETE CASCADE,
    group_id     bigint REFERENCES user_groups (id) ON DELETE CASCADE,
    workspace_id bigint REFERENCES workspaces (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CHECK ((user_id IS NULL) <> (group_id IS NULL))
);
-- One assignment of a role to a principal in a scope.
CREATE UNIQUE INDEX role_assignments_once
    ON role_assignments (role, coalesce(user_id, 0), coalesce(group_id, 0), coalesce(workspace_id, 0));
CREATE INDEX role_assignments_by_user ON role_assignments (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX role_assignments_by_group ON role_assignments (group_id) WHERE group_id IS NOT NULL;
CREATE INDEX role_assignments_by_workspace ON role_assignments (workspace_id) WHERE workspace_id IS NOT NULL;

-- Who holds which role where: a user's own assignments and those of their
-- groups, one row each (workspace_id NULL: cluster-wide), read once per
-- request into the user's Actor. The lists filter with the same two
-- branches written out (workspace_id IN (SELECT ra.workspace_id FROM
-- role_assignments ra WHERE ra.role = ANY($roles) AND (ra.user_id = $1 OR
-- ra.group_id IN (SELECT group_id FROM user_group_members WHERE user_id =
-- $1)))), a semi-join on the indexes above that plans faster than the view.
CREATE VIEW role_holders AS
SELECT ra.id AS assignment_id, ra.user_id, ra.workspace_id, ra.role, NULL::bigint AS group_id
FROM role_assignments ra WHERE ra.user_id IS NOT NULL
UNION ALL
SELECT ra.id, gm.user_id, ra.workspace_id, ra.role, ra.group_id
FROM role_assignments ra JOIN user_group_members gm ON gm.group_id = ra.group_id;

-- +goose Down
DROP VIEW role_holders;
DROP TABLE role_assignments;
DROP TABLE user_group_members;
DROP TABLE user_groups;
