package handlers_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func dialTunnel(ctx context.Context, m *handlerstest.Master, token, id string, h http.Header, query ...string) (*websocket.Conn, *http.Response, error) {
	if h == nil {
		h = http.Header{}
	}
	h.Set("Authorization", "Bearer "+token)
	return websocket.Dial(ctx, "ws"+strings.TrimPrefix(m.URL, "http")+"/api/v1/tasks/"+id+"/tunnel"+strings.Join(query, ""), &websocket.DialOptions{HTTPHeader: h})
}

func TestAShellsKeysAndTunnelAreItsOwnersAlone(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"bob"},"password":"s3cret-pw"}`, nil)
	bob := login(t, m, "bob", "s3cret-pw")
	id := startShell(t, m, admin)

	var keys resolute.TaskSSHResponse
	if code := api(t, m, "GET", "/api/v1/shells/"+id+"/ssh", admin, "", &keys); code != 200 ||
		!strings.Contains(keys.Keys.PrivateKey, "BEGIN OPENSSH PRIVATE KEY") || !strings.HasPrefix(keys.Keys.HostPublicKey, "ssh-ed25519 ") {
		t.Fatalf("the owner's keys: %d %+v", code, keys.Keys.TaskID)
	}
	var refused resolute.ErrorResponse
	if code := api(t, m, "GET", "/api/v1/shells/"+id+"/ssh", bob, "", &refused); code != 403 {
		t.Fatalf("bob got the shell's keys: %d", code)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, resp, err := dialTunnel(ctx, m, bob, id, nil); err == nil || resp == nil || resp.StatusCode != 403 {
		t.Fatalf("bob's tunnel: %v %v", err, resp)
	}
	// A page of another site may not open one with the owner's session.
	_, resp, err := dialTunnel(ctx, m, admin, id, http.Header{"Origin": {"http://elsewhere.example"}})
	if err == nil || resp == nil || resp.StatusCode != 403 {
		t.Fatalf("a cross-origin tunnel: %v %v", err, resp)
	}
	if b, _ := io.ReadAll(resp.Body); !strings.Contains(string(b), "cross-origin websocket refused") {
		t.Fatalf("a cross-origin tunnel refused with %s", b)
	}
	if _, resp, err := dialTunnel(ctx, m, admin, id, nil, "?port=22"); err == nil || resp == nil || resp.StatusCode != 403 {
		t.Fatalf("a port the shell does not list: %v %v", err, resp)
	}

	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		t.Skip("sshd is missing (apt-get install openssh-server): the shell serves no SSH to reach")
	}
	// The owner's tunnel reaches the shell's sshd, which speaks first.
	var conn *websocket.Conn
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if conn, resp, err = dialTunnel(ctx, m, admin, id, nil); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("the owner's tunnel: %v %v", err, resp)
	}
	defer conn.CloseNow()
	_, banner, err := conn.Read(ctx)
	if err != nil || !strings.HasPrefix(string(banner), "SSH-2.0-OpenSSH") {
		t.Fatalf("the tunnel's first bytes: %q %v", banner, err)
	}
}
