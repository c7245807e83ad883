package expconf_test

import (
	"strings"
	"testing"

	"github.com/resolute-ml/resolute/expconf"
)

func TestMaskYAMLKeepsTheConfigAsWrittenButItsSecrets(t *testing.T) {
	src := "# my run\nname: x\ncheckpoint_storage:\n  type: s3 # MinIO\n  bucket: b\n  access_key: AK-1\n  secret_key: 'SK-1'\n"
	got := expconf.MaskYAML(src)
	for _, s := range []string{"AK-1", "SK-1"} {
		if strings.Contains(got, s) {
			t.Errorf("secret %s shown:\n%s", s, got)
		}
	}
	for _, s := range []string{"# my run", "# MinIO", "bucket: b", `access_key: "********"`, `secret_key: "********"`} {
		if !strings.Contains(got, s) {
			t.Errorf("%q lost:\n%s", s, got)
		}
	}
	if plain := "name: x\ncheckpoint_storage: {type: gcs, bucket: b}\n"; expconf.MaskYAML(plain) != plain {
		t.Errorf("a config without secrets changed: %q", expconf.MaskYAML(plain))
	}
	if got := expconf.MaskYAML("checkpoint_storage: {secret_key: [unclosed"); strings.Contains(got, "unclosed") {
		t.Errorf("invalid YAML shown: %q", got)
	}
}

func TestUnmask(t *testing.T) {
	parse := func(y string) *expconf.CheckpointStorageConfig {
		t.Helper()
		c, err := expconf.ParseExperiment([]byte("checkpoint_storage: " + y))
		if err != nil {
			t.Fatal(err)
		}
		return c.CheckpointStorage
	}
	parent := parse("{type: s3, bucket: b, access_key: AK, secret_key: SK}")
	tests := map[string]struct {
		fork    string
		parent  *expconf.CheckpointStorageConfig
		wantKey string
		wantErr bool
	}{
		"a fork of the same bucket takes the parent's secrets back": {
			fork: `{type: s3, bucket: b, access_key: "********", secret_key: "********"}`, parent: parent, wantKey: "SK"},
		"a fork that gives its own secret keeps it": {
			fork: `{type: s3, bucket: b, access_key: "********", secret_key: NEW}`, parent: parent, wantKey: "NEW"},
		"a fork to another bucket may not take the parent's secrets": {
			fork: `{type: s3, bucket: other, secret_key: "********"}`, parent: parent, wantErr: true},
		"a config with no parent may not use the mask as a secret": {
			fork: `{type: s3, bucket: b, secret_key: "********"}`, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cs := parse(tc.fork)
			err := cs.Unmask(tc.parent)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && cs.S3.SecretKey != tc.wantKey {
				t.Errorf("secret_key %q, want %q", cs.S3.SecretKey, tc.wantKey)
			}
		})
	}
}

func TestAzureCredentialsComeWholeFromOneLayer(t *testing.T) {
	master := []byte("checkpoint_storage: {type: azure, container: c, account_url: 'https://a.blob.core.windows.net', credential: K}\n")
	tests := map[string]struct {
		user            string
		wantCS, wantURL string
		wantCred        string
	}{
		"a user's connection string replaces the master's account URL and credential": {
			user: "checkpoint_storage: {type: azure, container: mine, connection_string: CS}\n", wantCS: "CS"},
		"a user's container alone keeps the master's credentials": {
			user: "checkpoint_storage: {type: azure, container: mine}\n", wantURL: "https://a.blob.core.windows.net", wantCred: "K"},
		"a user's account URL alone takes no credential of the master's": {
			user:    "checkpoint_storage: {type: azure, container: mine, account_url: 'https://b.blob.core.windows.net'}\n",
			wantURL: "https://b.blob.core.windows.net"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := expconf.ParseExperimentLayers([][]byte{master, []byte("name: x\nentrypoint: a\nsearcher: {name: single, metric: loss}\n" + tc.user)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			a := cfg.CheckpointStorage.Azure
			if a.Container != "mine" || a.ConnectionString != tc.wantCS || a.AccountURL != tc.wantURL || a.Credential != tc.wantCred {
				t.Errorf("got %+v", *a)
			}
		})
	}
}
