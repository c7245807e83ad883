package storagetest

import (
	"bytes"
	"crypto/rand"
	"net/http"
	"net/url"
	"testing"
)

// object is 1 MiB and a bit of random bytes, with a key that needs escaping.
func object(t *testing.T) (string, []byte) {
	data := make([]byte, 1<<20+17)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	return "checkpoints/uuid 1/state dict+ä.pt", data
}

func TestEachServerStoresAnObjectAndReturnsIt(t *testing.T) {
	t.Parallel()
	key, data := object(t)

	t.Run("MinIO", func(t *testing.T) {
		t.Parallel()
		b := NewS3Bucket(t)
		if b.Region != "us-east-1" || b.AccessKey == "" || b.SecretKey == "" {
			t.Errorf("bucket %+v: want region us-east-1 and credentials", b)
		}
		if _, err := b.do(http.MethodPut, key, data, nil, http.StatusOK); err != nil {
			t.Fatalf("putting: %v", err)
		}
		got, err := b.do(http.MethodGet, key, nil, nil, http.StatusOK)
		if err != nil {
			t.Fatalf("getting: %v", err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("got %d bytes back, not the %d put", len(got), len(data))
		}
	})

	t.Run("fake-gcs-server", func(t *testing.T) {
		t.Parallel()
		b := NewGCSBucket(t)
		u := b.Endpoint + "/upload/storage/v1/b/" + url.PathEscape(b.Bucket) + "/o?uploadType=media&name=" + url.QueryEscape(key)
		req, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader(data))
		if _, err := do(req, http.StatusOK); err != nil {
			t.Fatalf("uploading: %v", err)
		}
		req, _ = http.NewRequest(http.MethodGet, b.Endpoint+"/storage/v1/b/"+url.PathEscape(b.Bucket)+"/o/"+url.PathEscape(key)+"?alt=media", nil)
		got, err := do(req, http.StatusOK)
		if err != nil {
			t.Fatalf("downloading: %v", err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("got %d bytes back, not the %d uploaded", len(got), len(data))
		}
	})

	t.Run("Azurite", func(t *testing.T) {
		t.Parallel()
		c := NewAzureContainer(t)
		if _, err := c.do(http.MethodPut, key, "", data, http.Header{"X-Ms-Blob-Type": {"BlockBlob"}}, http.StatusCreated); err != nil {
			t.Fatalf("putting: %v", err)
		}
		got, err := c.do(http.MethodGet, key, "", nil, nil, http.StatusOK)
		if err != nil {
			t.Fatalf("getting: %v", err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("got %d bytes back, not the %d put", len(got), len(data))
		}
	})
}

func TestBucketsAreFreshAndGoneAfterTheTest(t *testing.T) {
	t.Parallel()
	var s3 S3
	var gcs GCS
	var az Azure
	t.Run("first", func(t *testing.T) {
		s3, gcs, az = NewS3Bucket(t), NewGCSBucket(t), NewAzureContainer(t)
		if s3.Bucket == NewS3Bucket(t).Bucket || gcs.Bucket == NewGCSBucket(t).Bucket || az.Container == NewAzureContainer(t).Container {
			t.Errorf("two calls in one test gave the same bucket")
		}
		if _, err := s3.do(http.MethodPut, "a/b", []byte("x"), nil, http.StatusOK); err != nil {
			t.Fatal(err)
		}
		u := gcs.Endpoint + "/upload/storage/v1/b/" + gcs.Bucket + "/o?uploadType=media&name=a%2Fb"
		req, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader([]byte("x")))
		if _, err := do(req, http.StatusOK); err != nil {
			t.Fatal(err)
		}
		if _, err := az.do(http.MethodPut, "a/b", "", []byte("x"), http.Header{"X-Ms-Blob-Type": {"BlockBlob"}}, http.StatusCreated); err != nil {
			t.Fatal(err)
		}
	})
	if t.Failed() {
		return
	}
	// The buckets, which held objects, are gone.
	if _, err := s3.do(http.MethodHead, "", nil, nil, http.StatusNotFound); err != nil {
		t.Errorf("S3 bucket after the test: %v", err)
	}
	req, _ := http.NewRequest(http.MethodGet, gcs.Endpoint+"/storage/v1/b/"+gcs.Bucket, nil)
	if _, err := do(req, http.StatusNotFound); err != nil {
		t.Errorf("GCS bucket after the test: %v", err)
	}
	if _, err := az.do(http.MethodGet, "", "restype=container", nil, nil, http.StatusNotFound); err != nil {
		t.Errorf("Azure container after the test: %v", err)
	}
}

func TestUniqueNamesSuitEveryStore(t *testing.T) {
	valid := func(s string) bool {
		if len(s) < 3 || len(s) > 63 || s[0] < 'a' || s[0] > 'z' || s[len(s)-1] == '-' {
			return false
		}
		for i, r := range s {
			ok := ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r == '-'
			if !ok || (r == '-' && i > 0 && s[i-1] == '-') {
				return false
			}
		}
		return true
	}
	for name, sub := range map[string]string{
		"a plain name":                   "plain",
		"a name with spaces and slashes": "Upload resumes/after a  crash",
		"a very long name":               "ThisIsAVeryLongSubtestNameThatGoesOnAndOnBeyondSixtyThreeCharacters_and_more",
		"a name of symbols only":         "!!!---___",
	} {
		t.Run(name, func(t *testing.T) {
			t.Run(sub, func(t *testing.T) {
				if got := uniqueName(t); !valid(got) {
					t.Errorf("uniqueName = %q: not a valid bucket name", got)
				}
			})
		})
	}
}
