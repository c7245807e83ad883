package handlers_test

import (
	"archive/tar"
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/auth"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
	"github.com/resolute-ml/resolute/harness"
)

// secret is what root alone can read: a stand-in for /etc/shadow or the
// master's allocation state with other tasks' tokens.
const secret = "ROOT-ONLY-SECRET-7f3a9c"

// taskCheckpoint is a checkpoint of alice's experiment whose directory in
// storage belongs to her tasks' Unix user, as a trial of hers leaves it,
// with the file model.pt; and a root-only directory outside it holding the
// secret in its file f.
type taskCheckpoint struct {
	m           *handlerstest.Master
	token, uuid string
	dir         string // the checkpoint's directory
	uid         int    // alice's tasks' user
	secretDir   string
}

func newTaskCheckpoint(t *testing.T) taskCheckpoint {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the master reads checkpoints as root, and tasks run as other users")
	}
	m := handlerstest.Start(t, handlerstest.Options{})
	ctx := t.Context()
	hash, _ := auth.HashPassword("s3cret-pw")
	alice, err := m.DB.CreateUser(ctx, "alice", "", hash, false)
	if err != nil {
		t.Fatal(err)
	}
	e, err := m.Experiments.Create(ctx, authz.User(alice), control.CreateRequest{Paused: true,
		ConfigYAML: "name: kept\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\n"})
	if err != nil {
		t.Fatal(err)
	}
	trials, err := m.DB.Trials(ctx, e.ID)
	if err != nil || len(trials) != 1 {
		t.Fatalf("trials %v %v", trials, err)
	}
	c := taskCheckpoint{m: m, token: login(t, m, "alice", "s3cret-pw"), uuid: "dddddddd-0000-0000-0000-000000000000",
		uid: m.TaskUIDBase + int(alice.ID)}
	err = m.DB.CreateCheckpoint(ctx, resolute.Checkpoint{UUID: c.uuid, TrialID: trials[0].ID, ExperimentID: e.ID,
		StepsCompleted: 10, Resources: map[string]int64{"model.pt": 5}, Size: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(m.CheckpointDir, 0o755); err != nil {
		t.Fatal(err)
	}
	c.dir = filepath.Join(m.CheckpointDir, c.uuid)
	c.mkdir(t, c.dir)
	c.write(t, filepath.Join(c.dir, "model.pt"), "model")

	c.secretDir = filepath.Join(handlerstest.TempDir(t), "root-only")
	if err := os.Mkdir(c.secretDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.secretDir, "f"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// mkdir makes a directory of the task's user.
func (c taskCheckpoint) mkdir(t *testing.T, d string) {
	t.Helper()
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(d, c.uid, c.uid); err != nil {
		t.Fatal(err)
	}
}

// write writes a file of the task's user.
func (c taskCheckpoint) write(t *testing.T, p, data string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, c.uid, c.uid); err != nil {
		t.Fatal(err)
	}
}

// link makes a symbolic link of the task's user.
func (c taskCheckpoint) link(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(p, c.uid, c.uid); err != nil {
		t.Fatal(err)
	}
}

// download fetches the checkpoint's archive as alice: its status, its
// files by name (directories as "name/", with an empty body) and the
// archive itself.
func (c taskCheckpoint) download(t *testing.T) (int, map[string]string, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", c.m.URL+"/api/v1/checkpoints/"+c.uuid+"/download", nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	files := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		b, _ := io.ReadAll(tr)
		name := strings.TrimSuffix(h.Name, "/")
		if h.Typeflag == tar.TypeDir {
			name += "/"
		}
		files[name] = string(b)
	}
	return resp.StatusCode, files, raw
}

// TestACheckpointDownloadLeavesOutTheTaskUsersLinks plants in a checkpoint
// a link to a root-only file, a link to a root-only directory, a FIFO and
// a hard link to a root-only file (which a user can make where
// fs.protected_hardlinks is off): the download holds the checkpoint's own
// files (a hard link of the user's own file too) and nothing of the
// root-only ones, and does not hang on the FIFO.
func TestACheckpointDownloadLeavesOutTheTaskUsersLinks(t *testing.T) {
	c := newTaskCheckpoint(t)
	c.mkdir(t, filepath.Join(c.dir, "sub"))
	c.write(t, filepath.Join(c.dir, "sub", "f"), "weights")
	c.link(t, filepath.Join(c.secretDir, "f"), filepath.Join(c.dir, "shadow"))
	c.link(t, c.secretDir, filepath.Join(c.dir, "dirlink"))
	c.link(t, "../"+c.uuid+"/sub", filepath.Join(c.dir, "inside"))
	if err := syscall.Mkfifo(filepath.Join(c.dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A hard link needs the same file system: the secret's copy is in
	// storage's parent (root's), as /etc/shadow would be on a one-disk host.
	hard := filepath.Join(filepath.Dir(c.m.CheckpointDir), "shadow")
	if err := os.WriteFile(hard, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(hard, filepath.Join(c.dir, "hard")); err != nil {
		t.Fatal(err)
	}
	c.write(t, filepath.Join(c.dir, "own"), "mine")
	if err := os.Link(filepath.Join(c.dir, "own"), filepath.Join(c.dir, "own-again")); err != nil {
		t.Fatal(err)
	}

	code, files, raw := c.download(t)
	if code != 200 {
		t.Fatalf("download: status %d", code)
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	if want := []string{"model.pt", "own", "own-again", "sub/", "sub/f"}; !slices.Equal(names, want) {
		t.Errorf("the archive holds %q, want %q", names, want)
	}
	if files["model.pt"] != "model" || files["sub/f"] != "weights" {
		t.Errorf("model.pt %q, sub/f %q", files["model.pt"], files["sub/f"])
	}
	if bytes.Contains(raw, []byte(secret)) {
		t.Fatal("the download holds the root-only file")
	}
}

// TestACheckpointWhoseDirectoryIsALinkIsNotInStorage replaces the
// checkpoint's own directory by a link to a root-only directory: 410, and
// nothing of it.
func TestACheckpointWhoseDirectoryIsALinkIsNotInStorage(t *testing.T) {
	c := newTaskCheckpoint(t)
	if err := os.RemoveAll(c.dir); err != nil {
		t.Fatal(err)
	}
	c.link(t, c.secretDir, c.dir)
	code, _, raw := c.download(t)
	if code != http.StatusGone || bytes.Contains(raw, []byte(secret)) {
		t.Fatalf("download: status %d, secret in it: %v; want 410 and no secret", code, bytes.Contains(raw, []byte(secret)))
	}
}

// swapper is the task user's attack: in the checkpoint's directory it
// exchanges, atomically and in a loop, the directory sub with a link to the
// root-only directory, and the file model.pt with a link to the root-only
// file, for the seconds given; it prints how many exchanges it made.
const swapper = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
os.chdir(sys.argv[1])
end, n = time.monotonic() + float(sys.argv[2]), 0
while time.monotonic() < end:
    for a, b in ((b"sub", b"sublink"), (b"model.pt", b"modellink")):
        if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
            sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
        n += 1
print(n)
`

// TestACheckpointDownloadRacingTheTaskUsersSwapsNeverReadsOutside downloads
// a checkpoint again and again for two seconds while its task's user, as
// that user, swaps a directory and a file of it with links to root-only
// ones (renameat2 RENAME_EXCHANGE, the way to win the race between the
// master's look and its open): no download holds the secret.
func TestACheckpointDownloadRacingTheTaskUsersSwapsNeverReadsOutside(t *testing.T) {
	c := newTaskCheckpoint(t)
	python := harness.DefaultPython() // one every user can run
	c.mkdir(t, filepath.Join(c.dir, "sub"))
	for _, name := range []string{"a", "f", "z"} {
		c.write(t, filepath.Join(c.dir, "sub", name), "weights")
	}
	c.link(t, c.secretDir, filepath.Join(c.dir, "sublink"))
	c.link(t, filepath.Join(c.secretDir, "f"), filepath.Join(c.dir, "modellink"))

	attack := exec.Command(python, "-c", swapper, c.dir, "2")
	attack.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(c.uid), Gid: uint32(c.uid), Groups: []uint32{}}}
	var out, stderr strings.Builder
	attack.Stdout, attack.Stderr = &out, &stderr
	if err := attack.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- attack.Wait() }()

	downloads, leaks := 0, 0
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("the attacker failed: %v: %s", err, stderr.String())
			}
			running = false
		default:
			_, _, raw := c.download(t)
			downloads++
			if bytes.Contains(raw, []byte(secret)) {
				leaks++
			}
		}
	}
	t.Logf("%d downloads while the task's user made %s exchanges", downloads, strings.TrimSpace(out.String()))
	if strings.TrimSpace(out.String()) == "0" || downloads == 0 {
		t.Fatalf("no race was run: %d downloads, %s exchanges", downloads, out.String())
	}
	if leaks > 0 {
		t.Fatalf("%d of %d downloads held the root-only file", leaks, downloads)
	}
}
