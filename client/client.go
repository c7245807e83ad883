package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
)

// DefaultTimeout bounds every call that is not a followed stream.
const DefaultTimeout = 30 * time.Second

// Client calls one master's API. It is safe for concurrent use.
type Client struct {
	base      string // master URL without a trailing slash
	token     string
	http      *http.Client // calls with a timeout
	stream    *http.Client // followed streams: no overall timeout
	userAgent string
}

// Option tunes a Client.
type Option func(*Client)

// WithToken sends token as the bearer token of every call.
func WithToken(token string) Option {
	return func(c *Client) { c.token = token }
}

// WithHTTPClient replaces the HTTP client used for calls with a timeout.
// Followed streams use a copy of it without the timeout.
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) {
		c.http = h
		s := *h
		s.Timeout = 0
		c.stream = &s
	}
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option {
	return func(c *Client) { c.userAgent = ua }
}

// New returns a client of the master at masterURL (e.g.
// "http://localhost:8080"); see ParseMasterURL for bare host:port forms.
func New(masterURL string, opts ...Option) *Client {
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: DefaultTimeout,
		MaxIdleConns:          10,
		IdleConnTimeout:       90 * time.Second,
	}
	c := &Client{
		base:      strings.TrimRight(masterURL, "/"),
		http:      &http.Client{Timeout: DefaultTimeout, Transport: transport},
		stream:    &http.Client{Transport: transport},
		userAgent: "resolute-client/" + resolute.Version,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// URL returns the master's URL.
func (c *Client) URL() string { return c.base }

// Token returns the bearer token, or "" when the client is anonymous.
func (c *Client) Token() string { return c.token }

// ParseMasterURL turns a master address as people type it into a URL:
// a bare host or host:port gets http:// in front, and trailing slashes go.
func ParseMasterURL(addr string) (string, error) {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return "", errors.New("master address is empty")
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "", fmt.Errorf("master address %q: %w", addr, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("master address %q: scheme must be http or https", addr)
	}
	if u.Host == "" {
		return "", fmt.Errorf("master address %q: no host", addr)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// do sends a JSON request and decodes a JSON answer into out (when not nil).
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	resp, err := c.send(ctx, c.http, method, path, query, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// send performs a request with in, if not nil, as its JSON body, and
// returns a response with a 2xx status; any other status becomes an error
// read from the body.
func (c *Client) send(ctx context.Context, hc *http.Client, method, path string, query url.Values, in any) (*http.Response, error) {
	if in == nil {
		return c.sendBody(ctx, hc, method, path, query, "", nil)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("%s %s: encode request: %w", method, path, err)
	}
	return c.sendBody(ctx, hc, method, path, query, "application/json", bytes.NewReader(b))
}

// sendBody is send for any body: it streams body with the given content
// type ("": no body, none).
func (c *Client) sendBody(ctx context.Context, hc *http.Client, method, path string, query url.Values, contentType string, body io.Reader) (*http.Response, error) {
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("cannot reach the master at %s: %w", c.base, unwrapURLError(err))
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, errorFrom(resp)
	}
	return resp, nil
}

// unwrapURLError drops the "Get \"http://...\":" prefix that *url.Error
// adds, since callers already name the master.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// errorFrom reads an error answer: the server's {"error": {...}} when the
// body has one, else a message built from the status and the body's start.
func errorFrom(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var er resolute.ErrorResponse
	if json.Unmarshal(b, &er) == nil && er.Error.Message != "" {
		code := er.Error.Code
		if code == "" {
			code = codeOf(resp.StatusCode)
		}
		return &resolute.Error{Code: code, Message: er.Error.Message}
	}
	msg := fmt.Sprintf("the master answered %s", resp.Status)
	if text := strings.TrimSpace(string(b)); text != "" && !strings.HasPrefix(text, "<") {
		if len(text) > 200 {
			text = text[:200] + "…"
		}
		msg += ": " + text
	}
	return &resolute.Error{Code: codeOf(resp.StatusCode), Message: msg}
}

// codeOf is the inverse of the server's code → status mapping.
func codeOf(status int) string {
	switch status {
	case http.StatusBadRequest:
		return resolute.EInvalid
	case http.StatusUnprocessableEntity:
		return resolute.EUnprocessable
	case http.StatusUnauthorized:
		return resolute.EUnauthorized
	case http.StatusForbidden:
		return resolute.EForbidden
	case http.StatusNotFound:
		return resolute.ENotFound
	case http.StatusConflict:
		return resolute.EConflict
	case http.StatusGone:
		return resolute.EGone
	case http.StatusRequestEntityTooLarge:
		return resolute.ETooLarge
	case http.StatusTooManyRequests:
		return resolute.ETooMany
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		return resolute.EUnavailable
	case http.StatusRequestTimeout:
		return resolute.ETimeout
	}
	return resolute.EInternal
}

func idPath(format string, id int64) string {
	return fmt.Sprintf(format, id)
}

func boolQuery(q url.Values, name string, v *bool) {
	if v != nil {
		q.Set(name, fmt.Sprint(*v))
	}
}
