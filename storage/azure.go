package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/resolute-ml/resolute/expconf"
)

// Azure is an Azure Blob Storage container, reached with a connection
// string, or an account URL with a credential: a shared key
// ("account_name:account_key" or the bare key, whose account is the URL's),
// a SAS token, or none, when Azure's default chain (environment, managed or
// workload identity, the az CLI) gives one, as the Python SDK does.
type Azure struct {
	client    *container.Client
	container string
	prefix    string // a container given as "name/path" keeps its blobs under path
}

func newAzure(c expconf.AzureStorage) (*Azure, error) {
	fail := func(cause string, err error) (*Azure, error) {
		return nil, &bucketError{store: fmt.Sprintf("azure container %q", c.Container), op: "connecting", cause: cause, err: err}
	}
	var svc *azblob.Client
	var err error
	switch {
	case c.ConnectionString != "":
		if svc, err = azblob.NewClientFromConnectionString(c.ConnectionString, nil); err != nil {
			return fail("the connection_string is not valid", errors.New("malformed connection string"))
		}
	case c.Credential == "":
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return fail("no credential given and none in the environment", err)
		}
		if svc, err = azblob.NewClient(c.AccountURL, cred, nil); err != nil {
			return fail("the account_url is not valid", err)
		}
	case strings.Contains(c.Credential, "sig="): // a SAS token
		u := strings.TrimSuffix(c.AccountURL, "/") + "/?" + strings.TrimPrefix(c.Credential, "?")
		if svc, err = azblob.NewClientWithNoCredential(u, nil); err != nil {
			return fail("the account_url is not valid", err)
		}
	default:
		account, key, ok := strings.Cut(c.Credential, ":")
		if !ok {
			account, key = accountOf(c.AccountURL), c.Credential
		}
		cred, err := azblob.NewSharedKeyCredential(account, key)
		if err != nil {
			return fail("the credential is not a valid account key", errors.New("malformed account key"))
		}
		if svc, err = azblob.NewClientWithSharedKeyCredential(c.AccountURL, cred, nil); err != nil {
			return fail("the account_url is not valid", err)
		}
	}
	name, prefix, _ := strings.Cut(strings.Trim(c.Container, "/"), "/")
	return &Azure{client: svc.ServiceClient().NewContainerClient(name), container: name, prefix: prefix}, nil
}

// accountOf is the account of an account URL: https://ACCOUNT.blob...
// or, for Azurite and other emulators, http://host:port/ACCOUNT.
func accountOf(u string) string {
	rest := u[strings.Index(u, "://")+3:]
	host, path, _ := strings.Cut(rest, "/")
	if first, _, _ := strings.Cut(host, "."); first != "" && strings.Contains(host, ".blob.") {
		return first
	}
	acc, _, _ := strings.Cut(path, "/")
	return acc
}

// String names the container.
func (s *Azure) String() string {
	if s.prefix != "" {
		return fmt.Sprintf("azure container %q (prefix %q)", s.container, s.prefix)
	}
	return fmt.Sprintf("azure container %q", s.container)
}

// List lists the blobs under prefix.
func (s *Azure) List(ctx context.Context, prefix string) ([]Object, error) {
	p, err := checkPrefix(prefix)
	if err != nil {
		return nil, err
	}
	base := keyOf(s.prefix, p) + "/"
	var out []Object
	pages := s.client.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &base})
	for pages.More() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, s.err("listing "+p, err)
		}
		for _, b := range page.Segment.BlobItems {
			o := Object{Path: strings.TrimPrefix(*b.Name, base)}
			if b.Properties != nil && b.Properties.ContentLength != nil {
				o.Size = *b.Properties.ContentLength
			}
			if b.Properties != nil && b.Properties.LastModified != nil {
				o.ModTime = *b.Properties.LastModified
			}
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// Open streams one blob.
func (s *Azure) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	k, err := checkPrefix(key)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.NewBlobClient(keyOf(s.prefix, k)).DownloadStream(ctx, nil)
	if err != nil {
		return nil, s.err("reading "+k, err)
	}
	return resp.Body, nil
}

// Walk streams the blobs under prefix one at a time.
func (s *Azure) Walk(ctx context.Context, prefix string, fn WalkFunc) error {
	return walkList(ctx, s, prefix, fn)
}

// Delete deletes the blobs under prefix.
func (s *Azure) Delete(ctx context.Context, prefix string) error {
	objs, err := s.List(ctx, prefix)
	if err != nil {
		return err
	}
	p, _ := checkPrefix(prefix)
	for _, o := range objs {
		_, err := s.client.NewBlobClient(keyOf(s.prefix, p+"/"+o.Path)).Delete(ctx, nil)
		if err != nil && !bloberror.HasCode(err, bloberror.BlobNotFound) {
			return s.err("deleting "+p, err)
		}
	}
	return nil
}

// err names the container, what was done and, in words, why it failed.
// The SDK's own error is kept only as its code: its text quotes the
// request, and a SAS credential is in the request's URL.
func (s *Azure) err(op string, err error) error {
	cause := "request failed"
	var re *azcore.ResponseError
	switch {
	case bloberror.HasCode(err, bloberror.ContainerNotFound):
		cause = "the container does not exist"
	case bloberror.HasCode(err, bloberror.BlobNotFound):
		cause = "no such blob"
		return &bucketError{store: s.String(), op: op, cause: cause, err: ErrNotFound}
	case bloberror.HasCode(err, bloberror.AuthenticationFailed, bloberror.AuthorizationFailure,
		bloberror.AuthorizationPermissionMismatch, bloberror.InsufficientAccountPermissions):
		cause = "access denied: check the connection_string or the credential"
	}
	if errors.As(err, &re) {
		return &bucketError{store: s.String(), op: op, cause: cause,
			err: fmt.Errorf("%d %s", re.StatusCode, re.ErrorCode)}
	}
	return &bucketError{store: s.String(), op: op, cause: cause, err: err}
}
