package storage

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Put writes an object into a bucket's store with its own SDK, as the
// harness would have uploaded it: key is relative to the store's base
// (a checkpoint's UUID, a slash, its path). The master never writes a
// checkpoint, so this lives with the tests.
func Put(ctx context.Context, st Store, key string, body io.Reader, size int64) error {
	switch s := st.(type) {
	case *S3:
		_, err := s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: aws.String(keyOf(s.prefix, key)),
			Body: body, ContentLength: aws.Int64(size)})
		return err
	case *GCS:
		w := s.client.Bucket(s.bucket).Object(keyOf(s.prefix, key)).NewWriter(ctx)
		if _, err := io.Copy(w, body); err != nil {
			w.Close()
			return err
		}
		return w.Close()
	case *Azure:
		data, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		_, err = s.client.NewBlockBlobClient(keyOf(s.prefix, key)).UploadBuffer(ctx, data, nil)
		return err
	}
	return fmt.Errorf("Put: %T is not a bucket", st)
}

// PutBytes is Put of a byte slice.
func PutBytes(ctx context.Context, st Store, key string, body []byte) error {
	return Put(ctx, st, key, bytes.NewReader(body), int64(len(body)))
}
