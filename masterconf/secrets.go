package masterconf

import (
	"fmt"
	"os"

	"github.com/resolute-ml/resolute"
)

// ExposedSecrets lists, as warnings, the files of secrets that every Unix
// user of the machine may read: the configuration file when it holds a
// password or checkpoint storage keys, and the TLS key. Tasks run as users of their own (never the
// master's), and a task that reads the database's password or the
// certificate's key has what the master has.
func (c *Config) ExposedSecrets() []string {
	var files [][2]string
	if c.File != "" && (c.DB.Password != "" || c.Security.InitialUserPassword != "" || c.Security.DefaultPassword != "" || c.Observability.MetricsToken != "") {
		files = append(files, [2]string{c.File, "holds a password"})
	} else if c.File != "" && storageKeys(c.CheckpointStorage) {
		files = append(files, [2]string{c.File, "holds checkpoint storage keys"})
	}
	if c.TLS.Key != "" {
		files = append(files, [2]string{c.TLS.Key, "is the TLS key"})
	}
	var out []string
	for _, f := range files {
		if fi, err := os.Stat(f[0]); err == nil && fi.Mode().Perm()&0o004 != 0 {
			out = append(out, fmt.Sprintf("%s %s and every user of this machine may read it, tasks too: `chmod o-r %s`", f[0], f[1], f[0]))
		}
	}
	return out
}

// storageKeys says whether checkpoint_storage holds a secret.
func storageKeys(storage map[string]any) bool {
	for k, v := range storage {
		if s, ok := v.(string); ok && s != "" && resolute.IsStorageSecret(k) {
			return true
		}
	}
	return false
}
