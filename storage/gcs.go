package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	gcs "cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"

	"github.com/resolute-ml/resolute/expconf"
)

// GCS is a Google Cloud Storage bucket. Credentials come from Google's
// default chain (GOOGLE_APPLICATION_CREDENTIALS, gcloud's, the instance's
// or the pod's service account); STORAGE_EMULATOR_HOST points it at an
// emulator (fake-gcs-server), as the Go and Python clients both honor.
type GCS struct {
	client *gcs.Client
	bucket string
	prefix string
}

func newGCS(ctx context.Context, c expconf.GCSStorage) (*GCS, error) {
	// The client outlives the request that made it (a download streams
	// after New returns), so it is not tied to ctx.
	client, err := gcs.NewClient(context.WithoutCancel(ctx))
	if err != nil {
		return nil, &bucketError{store: fmt.Sprintf("gcs bucket %q", c.Bucket), op: "connecting",
			cause: "no credentials: set GOOGLE_APPLICATION_CREDENTIALS or run with a service account", err: err}
	}
	return &GCS{client: client, bucket: c.Bucket, prefix: c.Prefix}, nil
}

// String names the bucket and its prefix.
func (s *GCS) String() string {
	if p := strings.Trim(s.prefix, "/"); p != "" {
		return fmt.Sprintf("gcs bucket %q (prefix %q)", s.bucket, p)
	}
	return fmt.Sprintf("gcs bucket %q", s.bucket)
}

// List lists the objects under prefix.
func (s *GCS) List(ctx context.Context, prefix string) ([]Object, error) {
	p, err := checkPrefix(prefix)
	if err != nil {
		return nil, err
	}
	base := keyOf(s.prefix, p) + "/"
	var out []Object
	it := s.client.Bucket(s.bucket).Objects(ctx, &gcs.Query{Prefix: base})
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		} else if err != nil {
			return nil, s.err("listing "+p, err)
		}
		if strings.HasSuffix(a.Name, "/") {
			continue
		}
		out = append(out, Object{Path: strings.TrimPrefix(a.Name, base), Size: a.Size, ModTime: a.Updated})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// Open streams one object.
func (s *GCS) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	k, err := checkPrefix(key)
	if err != nil {
		return nil, err
	}
	r, err := s.client.Bucket(s.bucket).Object(keyOf(s.prefix, k)).NewReader(ctx)
	if err != nil {
		return nil, s.err("reading "+k, err)
	}
	return r, nil
}

// Walk streams the objects under prefix one at a time.
func (s *GCS) Walk(ctx context.Context, prefix string, fn WalkFunc) error {
	return walkList(ctx, s, prefix, fn)
}

// Delete deletes the objects under prefix one by one (GCS's JSON API has
// no multi-object delete).
func (s *GCS) Delete(ctx context.Context, prefix string) error {
	objs, err := s.List(ctx, prefix)
	if err != nil {
		return err
	}
	p, _ := checkPrefix(prefix)
	for _, o := range objs {
		err := s.client.Bucket(s.bucket).Object(keyOf(s.prefix, p+"/"+o.Path)).Delete(ctx)
		if err != nil && !errors.Is(err, gcs.ErrObjectNotExist) {
			return s.err("deleting "+p, err)
		}
	}
	return nil
}

// err names the bucket, what was done and, in words, why it failed.
func (s *GCS) err(op string, err error) error {
	cause := "request failed"
	var api *googleapi.Error
	switch {
	case errors.Is(err, gcs.ErrBucketNotExist):
		cause = "the bucket does not exist"
	case errors.Is(err, gcs.ErrObjectNotExist):
		cause = "no such object"
		err = fmt.Errorf("%w (%w)", ErrNotFound, err)
	case errors.As(err, &api) && (api.Code == 401 || api.Code == 403):
		cause = "access denied: check the service account's credentials and its roles on the bucket"
	case errors.As(err, &api) && api.Code == 404:
		cause = "the bucket does not exist"
	}
	return &bucketError{store: s.String(), op: op, cause: cause, err: err}
}
