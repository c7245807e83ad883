package storagetest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

var client = &http.Client{Timeout: 2 * time.Minute}

// do sends a request and returns the response's body, or an error naming
// the status and body when the status is not one of ok.
func do(req *http.Request, ok ...int) ([]byte, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	for _, code := range ok {
		if resp.StatusCode == code {
			return body, nil
		}
	}
	return nil, fmt.Errorf("%s %s: %s: %s", req.Method, req.URL.Redacted(), resp.Status, bytes.TrimSpace(body))
}

// S3: path-style requests signed with AWS Signature Version 4.

func (b S3) create() error {
	_, err := b.do(http.MethodPut, "", nil, nil, http.StatusOK)
	return err
}

// remove deletes the bucket and its objects at once with MinIO's
// force-delete header.
func (b S3) remove() error {
	_, err := b.do(http.MethodDelete, "", nil, http.Header{"X-Minio-Force-Delete": {"true"}},
		http.StatusNoContent, http.StatusOK, http.StatusNotFound)
	return err
}

// do sends a signed request for key in the bucket (the bucket itself when
// key is empty).
func (b S3) do(method, key string, body []byte, header http.Header, ok ...int) ([]byte, error) {
	u := b.Endpoint + "/" + b.Bucket
	if key != "" {
		u += "/" + escapePath(key)
	}
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	signV4(req, body, b.AccessKey, b.SecretKey, b.Region, time.Now())
	return do(req, ok...)
}

// signV4 signs req for service s3 (AWS Signature Version 4, every header
// signed).
func signV4(req *http.Request, body []byte, accessKey, secretKey, region string, now time.Time) {
	now = now.UTC()
	amzDate := now.Format("20060102T150405Z")
	day := now.Format("20060102")
	payload := sha256.Sum256(body)
	req.Header.Set("X-Amz-Date", amzDate)
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(payload[:]))
	req.Header.Set("Host", req.URL.Host)
	var names []string
	for k := range req.Header {
		names = append(names, strings.ToLower(k))
	}
	sort.Strings(names)
	var canonHeaders strings.Builder
	for _, n := range names {
		fmt.Fprintf(&canonHeaders, "%s:%s\n", n, strings.TrimSpace(strings.Join(req.Header.Values(n), ",")))
	}
	req.Header.Del("Host") // net/http sends req.Host
	signed := strings.Join(names, ";")
	canonical := strings.Join([]string{
		req.Method, req.URL.EscapedPath(), canonicalQuery(req.URL.Query()),
		canonHeaders.String(), signed, hex.EncodeToString(payload[:]),
	}, "\n")
	scope := day + "/" + region + "/s3/aws4_request"
	hashed := sha256.Sum256([]byte(canonical))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(hashed[:])
	key := hmacSHA256([]byte("AWS4"+secretKey), day)
	for _, part := range []string{region, "s3", "aws4_request"} {
		key = hmacSHA256(key, part)
	}
	req.Header.Set("Authorization", fmt.Sprintf("AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s",
		accessKey, scope, signed, hex.EncodeToString(hmacSHA256(key, toSign))))
}

func canonicalQuery(q url.Values) string {
	var parts []string
	for k, vs := range q {
		for _, v := range vs {
			parts = append(parts, awsEscape(k)+"="+awsEscape(v))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "&")
}

// awsEscape percent-encodes all but RFC 3986's unreserved characters.
func awsEscape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

func escapePath(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = awsEscape(p)
	}
	return strings.Join(parts, "/")
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// GCS: the JSON API, which fake-gcs-server serves without authentication.

func (b GCS) create() error {
	body, _ := json.Marshal(map[string]string{"name": b.Bucket})
	req, err := http.NewRequest(http.MethodPost, b.Endpoint+"/storage/v1/b?project=resolute-test", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	_, err = do(req, http.StatusOK)
	return err
}

// remove deletes the bucket's objects, page by page, then the bucket (GCS
// refuses to delete a bucket that holds objects).
func (b GCS) remove() error {
	base := b.Endpoint + "/storage/v1/b/" + url.PathEscape(b.Bucket)
	token := ""
	for {
		q := url.Values{"fields": {"items(name),nextPageToken"}}
		if token != "" {
			q.Set("pageToken", token)
		}
		req, err := http.NewRequest(http.MethodGet, base+"/o?"+q.Encode(), nil)
		if err != nil {
			return err
		}
		body, err := do(req, http.StatusOK, http.StatusNotFound)
		if err != nil {
			return err
		}
		var page struct {
			Items         []struct{ Name string }
			NextPageToken string
		}
		if len(body) > 0 {
			if err := json.Unmarshal(body, &page); err != nil {
				return fmt.Errorf("listing %s: %w", b.Bucket, err)
			}
		}
		for _, o := range page.Items {
			req, err := http.NewRequest(http.MethodDelete, base+"/o/"+url.PathEscape(o.Name), nil)
			if err != nil {
				return err
			}
			if _, err := do(req, http.StatusNoContent, http.StatusOK, http.StatusNotFound); err != nil {
				return err
			}
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	req, err := http.NewRequest(http.MethodDelete, base, nil)
	if err != nil {
		return err
	}
	_, err = do(req, http.StatusNoContent, http.StatusOK, http.StatusNotFound)
	return err
}

// Azure: the Blob service's REST API with Shared Key authorization.

const azureVersion = "2021-08-06"

func (c Azure) create() error {
	_, err := c.do(http.MethodPut, "", "restype=container", nil, nil, http.StatusCreated)
	return err
}

// remove deletes the container, which deletes its blobs.
func (c Azure) remove() error {
	_, err := c.do(http.MethodDelete, "", "restype=container", nil, nil, http.StatusAccepted, http.StatusNotFound)
	return err
}

// do sends a Shared Key request for blob in the container (the container
// itself when blob is empty).
func (c Azure) do(method, blob, query string, body []byte, header http.Header, ok ...int) ([]byte, error) {
	u := c.AccountURL + "/" + c.Container
	if blob != "" {
		u += "/" + escapePath(blob)
	}
	if query != "" {
		u += "?" + query
	}
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if err := signSharedKey(req, int64(len(body)), c.AccountName, c.AccountKey, time.Now()); err != nil {
		return nil, err
	}
	return do(req, ok...)
}

// signSharedKey signs req with the account's key as Azure Storage's Shared
// Key scheme describes (the 2009-09-19 and later string to sign).
func signSharedKey(req *http.Request, length int64, account, key string, now time.Time) error {
	req.Header.Set("X-Ms-Date", now.UTC().Format(http.TimeFormat))
	req.Header.Set("X-Ms-Version", azureVersion)
	contentLength := ""
	if length > 0 {
		contentLength = strconv.FormatInt(length, 10)
	}
	var msNames []string
	for k := range req.Header {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-ms-") {
			msNames = append(msNames, lk)
		}
	}
	sort.Strings(msNames)
	var s strings.Builder
	s.WriteString(req.Method + "\n")
	for _, h := range []string{"Content-Encoding", "Content-Language"} {
		s.WriteString(req.Header.Get(h) + "\n")
	}
	s.WriteString(contentLength + "\n")
	for _, h := range []string{"Content-MD5", "Content-Type", "Date", "If-Modified-Since", "If-Match",
		"If-None-Match", "If-Unmodified-Since", "Range"} {
		s.WriteString(req.Header.Get(h) + "\n")
	}
	for _, n := range msNames {
		s.WriteString(n + ":" + strings.TrimSpace(req.Header.Get(n)) + "\n")
	}
	// The canonical resource names the account, then the URL's path (which,
	// on Azurite, starts with the account too), then the query sorted.
	s.WriteString("/" + account + req.URL.EscapedPath())
	q := req.URL.Query()
	var names []string
	for k := range q {
		names = append(names, strings.ToLower(k))
	}
	sort.Strings(names)
	for _, n := range names {
		vs := append([]string(nil), q[n]...)
		sort.Strings(vs)
		s.WriteString("\n" + n + ":" + strings.Join(vs, ","))
	}
	secret, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return fmt.Errorf("account key: %w", err)
	}
	sig := base64.StdEncoding.EncodeToString(hmacSHA256(secret, s.String()))
	req.Header.Set("Authorization", "SharedKey "+account+":"+sig)
	return nil
}
