package masterconf

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/resolute-ml/resolute"
)

func TestRedactedHidesEverySecretAndKeepsTheRest(t *testing.T) {
	c := Default()
	c.DB = DB{Host: "db.internal", Password: "db-pw-123"}
	c.Security.InitialUserPassword = "init-pw-456"
	c.CheckpointStorage = map[string]any{"type": "s3", "bucket": "b", "access_key": "AKIA789", "secret_key": "sk-000"}
	c.ResourcePools = []ResourcePool{{PoolName: "gpu", TaskContainerDefaults: map[string]any{"registry_auth": map[string]any{"password": "reg-pw"}}}}
	m, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := yaml.Marshal(m)
	text := string(out)
	for _, secret := range []string{"db-pw-123", "init-pw-456", "AKIA789", "sk-000", "reg-pw"} {
		if strings.Contains(text, secret) {
			t.Errorf("the redacted config shows %q:\n%s", secret, text)
		}
	}
	for _, kept := range []string{"host: db.internal", "bucket: b", "pool_name: gpu", resolute.Masked, "session_lifetime:"} {
		if !strings.Contains(text, kept) {
			t.Errorf("the redacted config lacks %q:\n%s", kept, text)
		}
	}
}
