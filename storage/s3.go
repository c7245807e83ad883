package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/resolute-ml/resolute/expconf"
)

// defaultS3Region is the region when neither the config nor the
// environment (AWS_REGION, ~/.aws/config) names one, as boto3 falls back.
const defaultS3Region = "us-east-1"

// S3 is a bucket of S3 or of an S3-compatible server (MinIO) at
// endpoint_url, addressed by path ("host/bucket/key"), which every such
// server understands.
type S3 struct {
	client *s3.Client
	bucket string
	prefix string
}

func newS3(ctx context.Context, c expconf.S3Storage) (*S3, error) {
	var opts []func(*config.LoadOptions) error
	if os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
		opts = append(opts, config.WithDefaultRegion(defaultS3Region))
	} else if r := os.Getenv("AWS_DEFAULT_REGION"); os.Getenv("AWS_REGION") == "" {
		opts = append(opts, config.WithRegion(r)) // boto3's name for it
	}
	if c.AccessKey != "" || c.SecretKey != "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(c.AccessKey, c.SecretKey, "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3 bucket %q: loading AWS configuration: %w", c.Bucket, err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if c.EndpointURL != "" {
			o.BaseEndpoint = aws.String(c.EndpointURL)
			o.UsePathStyle = true
		}
		// MinIO and older servers reject the newer default checksums.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &S3{client: client, bucket: c.Bucket, prefix: c.Prefix}, nil
}

// String names the bucket and its prefix.
func (s *S3) String() string {
	if p := strings.Trim(s.prefix, "/"); p != "" {
		return fmt.Sprintf("s3 bucket %q (prefix %q)", s.bucket, p)
	}
	return fmt.Sprintf("s3 bucket %q", s.bucket)
}

// List lists the objects under prefix, page by page.
func (s *S3) List(ctx context.Context, prefix string) ([]Object, error) {
	p, err := checkPrefix(prefix)
	if err != nil {
		return nil, err
	}
	base := keyOf(s.prefix, p) + "/"
	var out []Object
	pages := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &base})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, s.err("listing "+p, err)
		}
		for _, o := range page.Contents {
			key := aws.ToString(o.Key)
			if strings.HasSuffix(key, "/") {
				continue // a "directory" marker some tools write
			}
			out = append(out, Object{Path: strings.TrimPrefix(key, base), Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// Open streams one object.
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	k, err := checkPrefix(key)
	if err != nil {
		return nil, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(keyOf(s.prefix, k))})
	if err != nil {
		return nil, s.err("reading "+k, err)
	}
	return out.Body, nil
}

// Walk streams the objects under prefix one at a time.
func (s *S3) Walk(ctx context.Context, prefix string, fn WalkFunc) error {
	return walkList(ctx, s, prefix, fn)
}

// Delete deletes the objects under prefix, a thousand per request.
func (s *S3) Delete(ctx context.Context, prefix string) error {
	objs, err := s.List(ctx, prefix)
	if err != nil {
		return err
	}
	p, _ := checkPrefix(prefix)
	for len(objs) > 0 {
		n := min(len(objs), 1000)
		ids := make([]types.ObjectIdentifier, n)
		for i, o := range objs[:n] {
			ids[i] = types.ObjectIdentifier{Key: aws.String(keyOf(s.prefix, p+"/"+o.Path))}
		}
		out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &s.bucket,
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
		if err != nil {
			return s.err("deleting "+p, err)
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return s.err("deleting "+p, fmt.Errorf("%s: %s %s", aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message)))
		}
		objs = objs[n:]
	}
	return nil
}

// err names the bucket, what was done and, in words, why it failed.
func (s *S3) err(op string, err error) error {
	cause := "request failed"
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "NoSuchBucket":
			cause = "the bucket does not exist"
		case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "Forbidden", "ExpiredToken", "InvalidToken":
			cause = "access denied: check the access_key and secret_key (or the credentials of the environment)"
		case "NoSuchKey", "NotFound":
			cause = "no such object"
			err = fmt.Errorf("%w (%w)", ErrNotFound, err)
		}
	} else if strings.Contains(err.Error(), "failed to retrieve credentials") || strings.Contains(err.Error(), "no EC2 IMDS role") {
		cause = "no credentials: give access_key and secret_key, or credentials in the environment or the instance's role"
	}
	return &bucketError{store: s.String(), op: op, cause: cause, err: err}
}
