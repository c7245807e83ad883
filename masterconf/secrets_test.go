package masterconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFilesOfSecretsEveryoneMayReadAreNamed(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "tls.key")
	if err := os.WriteFile(key, []byte("key"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		yaml string
		mode os.FileMode
		want []string // substrings, one per warning
	}{
		"a readable config with a database password": {
			yaml: "db: {host: db.internal, password: secret}\n", mode: 0o644, want: []string{"holds a password"}},
		"a readable config with the initial password and a readable key": {
			yaml: "security: {initial_user_password: s3cret-pw}\ntls: {cert: c.pem, key: " + key + "}\n", mode: 0o644,
			want: []string{"holds a password", "is the TLS key"}},
		"a readable config with checkpoint storage keys": {
			yaml: "checkpoint_storage: {type: s3, bucket: b, access_key: AK, secret_key: SK}\n", mode: 0o644,
			want: []string{"holds checkpoint storage keys"}},
		"a config readable only by its owner": {
			yaml: "db: {host: db.internal, password: secret}\n", mode: 0o600},
		"a readable config without secrets": {yaml: "port: 9000\n", mode: 0o644},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := load(t, tc.yaml, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(cfg.File, tc.mode); err != nil {
				t.Fatal(err)
			}
			got := cfg.ExposedSecrets()
			if len(got) != len(tc.want) {
				t.Fatalf("warnings %q, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) || !strings.Contains(got[i], "chmod o-r") {
					t.Errorf("warning %q does not say %q and what to do", got[i], w)
				}
			}
		})
	}
}
