-- +goose Up
-- SSH into shells: each shell gets, when it is created, a key pair for its
-- owner (the private half is given only to them) and a host key for the
-- sshd inside it, whose public half the owner's ssh pins in known_hosts. The
-- login is the Unix user the shell runs as, named when it was created.
CREATE TABLE task_ssh_keys (
    task_id          text PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    login            text NOT NULL,
    private_key      text NOT NULL,
    public_key       text NOT NULL,
    host_private_key text NOT NULL,
    host_public_key  text NOT NULL
);

-- Where a trial's allocation is reached (a pod IP on Kubernetes), for its
-- environment.proxy_ports; none means the master's own loopback. Apart from
-- allocations, whose rows the scheduler reads whole and often.
CREATE TABLE allocation_addrs (
    allocation_id text PRIMARY KEY REFERENCES allocations (id) ON DELETE CASCADE,
    addr          text NOT NULL
);

-- +goose Down
DROP TABLE allocation_addrs;
DROP TABLE task_ssh_keys;
