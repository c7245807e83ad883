package storagetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestServersComeFromTheEnvironmentOnlyWhenItNamesThemAll(t *testing.T) {
	all := map[string]string{
		S3EndpointEnv:        "http://127.0.0.1:9000/",
		S3AccessKeyEnv:       "key",
		S3SecretKeyEnv:       "secret",
		GCSEndpointEnv:       "http://127.0.0.1:4443",
		AzureBlobEndpointEnv: "http://127.0.0.1:10000/devstoreaccount1",
	}
	without := func(name string) map[string]string {
		m := map[string]string{}
		for k, v := range all {
			if k != name {
				m[k] = v
			}
		}
		return m
	}
	with := func(name, value string) map[string]string {
		m := without(name)
		m[name] = value
		return m
	}
	want := endpoints{
		s3Endpoint: "http://127.0.0.1:9000", s3AccessKey: "key", s3SecretKey: "secret",
		gcsEndpoint: "http://127.0.0.1:4443", azureAccountURL: "http://127.0.0.1:10000/devstoreaccount1",
	}
	for name, tc := range map[string]struct {
		env    map[string]string
		wantOK bool
	}{
		"every variable set names every server":          {env: all, wantOK: true},
		"a bare Azurite address gets the account's path": {env: with(AzureBlobEndpointEnv, "http://127.0.0.1:10000"), wantOK: true},
		"no S3 secret key means starting servers":        {env: without(S3SecretKeyEnv)},
		"no GCS endpoint means starting servers":         {env: without(GCSEndpointEnv)},
		"no Azure endpoint means starting servers":       {env: without(AzureBlobEndpointEnv)},
		"an empty environment means starting servers":    {env: map[string]string{}},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := fromEnv(func(k string) string { return tc.env[k] })
			if ok != tc.wantOK {
				t.Fatalf("fromEnv ok = %v, want %v", ok, tc.wantOK)
			}
			if ok {
				if diff := cmp.Diff(want, got, cmp.AllowUnexported(endpoints{})); diff != "" {
					t.Errorf("fromEnv (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestTheScriptsExportLinesAreRead(t *testing.T) {
	out := "export RESOLUTE_TEST_S3_ENDPOINT=http://127.0.0.1:1\nexport RESOLUTE_TEST_S3_SECRET_KEY='a b'\nnoise\n"
	want := map[string]string{S3EndpointEnv: "http://127.0.0.1:1", S3SecretKeyEnv: "a b"}
	if diff := cmp.Diff(want, parseExports(out)); diff != "" {
		t.Errorf("parseExports (-want +got):\n%s", diff)
	}
}
