package resolute

// TaskSSHKeys are a shell's SSH keys: the owner's key pair and the host key
// of the sshd inside the shell. The private halves never leave the master
// but to the shell's owner (PrivateKey) and to the shell itself
// (HostPrivateKey, never in JSON).
type TaskSSHKeys struct {
	TaskID string `json:"taskId"`
	// Login is the Unix user ssh logs in as: the one the shell runs as.
	Login string `json:"login"`
	// PrivateKey is the owner's key, in OpenSSH's PEM format.
	PrivateKey string `json:"privateKey"`
	// PublicKey is its public half, as in authorized_keys.
	PublicKey string `json:"publicKey"`
	// HostPublicKey is the sshd's host key, as in known_hosts (without
	// the host names).
	HostPublicKey  string `json:"hostPublicKey"`
	HostPrivateKey string `json:"-"`
}

// TaskSSHResponse is GET /api/v1/shells/{id}/ssh.
type TaskSSHResponse struct {
	Keys TaskSSHKeys `json:"keys"`
}
