package client_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
)

func TestIgnoreMatch(t *testing.T) {
	t.Parallel()
	ig := client.ParseIgnore(`
# comments and blank lines are skipped
*.pyc
data/
/build
logs/**/*.log
**/secret.txt
docs/*.md
!docs/keep.md
\#literal
model?.ckpt
`)
	tests := map[string]struct {
		path  string
		isDir bool
		want  bool
	}{
		"a glob matches at any depth":                 {"pkg/mod.pyc", false, true},
		"a glob matches at the top":                   {"mod.pyc", false, true},
		"a glob needs its suffix":                     {"mod.py", false, false},
		"a dir-only pattern matches directories":      {"sub/data", true, true},
		"a dir-only pattern skips files":              {"data", false, false},
		"a leading slash anchors":                     {"build", true, true},
		"an anchored pattern does not match deeper":   {"src/build", true, false},
		"a double star matches directories between":   {"logs/a/b/run.log", false, true},
		"a double star matches no directories":        {"logs/run.log", false, true},
		"a leading double star matches at any depth":  {"x/y/secret.txt", false, true},
		"a leading double star matches at the top":    {"secret.txt", false, true},
		"a middle slash anchors":                      {"docs/a.md", false, true},
		"a star stays within a segment":               {"docs/sub/a.md", false, false},
		"a negation brings a file back":               {"docs/keep.md", false, false},
		"an escaped hash is a literal name":           {"#literal", false, true},
		"a comment is not a pattern":                  {"comments", false, false},
		"an unrelated path is kept":                   {"train.py", false, false},
		"a name that only contains a pattern is kept": {"metadata/x", true, false},
		"a question mark matches one character":       {"model1.ckpt", false, true},
		"a question mark matches only one character":  {"model12.ckpt", false, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ig.Match(tc.path, tc.isDir); got != tc.want {
				t.Errorf("Match(%q, dir=%v) = %v, want %v", tc.path, tc.isDir, got, tc.want)
			}
		})
	}
}

// write creates files under dir from name → content.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// listTarGz returns the names and contents of a tar.gz's files.
func listTarGz(t *testing.T, data []byte) map[string]string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		out[h.Name] = string(b)
	}
}

func TestScanContextHonoursDetignore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"train.py":             "print('hi')",
		"lib/util.py":          "x = 1",
		"lib/util.pyc":         "bytecode",
		"data/big.bin":         "0123456789",
		".git/HEAD":            "ref: main",
		"lib/__pycache__/a.py": "cached",
		".detignore":           "# large data\ndata/\n*.pyc\n",
	})
	extra := filepath.Join(t.TempDir(), "extra.txt")
	os.WriteFile(extra, []byte("included"), 0o644)

	c, err := client.ScanContext(dir, []string{extra})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := c.WriteTarGz(&buf); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		".detignore": "# large data\ndata/\n*.pyc\n", "train.py": "print('hi')", "lib/": "",
		"lib/util.py": "x = 1", "extra.txt": "included",
	}
	if diff := cmp.Diff(want, listTarGz(t, buf.Bytes())); diff != "" {
		t.Errorf("archive (-want +got):\n%s", diff)
	}
	if c.NumFiles() != 4 || c.Size != int64(len(want[".detignore"])+11+5+8) {
		t.Errorf("NumFiles = %d, Size = %d", c.NumFiles(), c.Size)
	}

	if _, err := client.ScanContext(dir, []string{filepath.Join(dir, "train.py")}); err == nil ||
		!strings.Contains(err.Error(), `"train.py" is already in the context`) {
		t.Errorf("an include clashing with a context file: %v", err)
	}
}

func TestUntarRefusesEscapes(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		name    string
		typ     byte
		wantErr string
	}{
		"a relative file is written":  {"a/b.txt", tar.TypeReg, ""},
		"an absolute path is refused": {"/etc/passwd", tar.TypeReg, "outside"},
		"a parent path is refused":    {"a/../../x", tar.TypeReg, "outside"},
		"a bare parent is refused":    {"..", tar.TypeDir, "outside"},
		"a symlink is refused":        {"link", tar.TypeSymlink, "only files and directories"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			h := &tar.Header{Name: tc.name, Typeflag: tc.typ, Mode: 0o644}
			if tc.typ == tar.TypeReg {
				h.Size = 2
			}
			if tc.typ == tar.TypeSymlink {
				h.Linkname = "/etc"
			}
			tw.WriteHeader(h)
			if tc.typ == tar.TypeReg {
				tw.Write([]byte("ok"))
			}
			tw.Close()
			root := t.TempDir()
			dir := filepath.Join(root, "out")
			err := client.Untar(&buf, dir)
			if tc.wantErr == "" {
				if b, rerr := os.ReadFile(filepath.Join(dir, tc.name)); err != nil || rerr != nil || string(b) != "ok" {
					t.Fatalf("err = %v, read %q %v", err, b, rerr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one with %q", err, tc.wantErr)
			}
			entries, _ := os.ReadDir(root)
			if len(entries) != 1 {
				t.Errorf("something was written beside the target: %v", entries)
			}
		})
	}
}

func TestUntarDoesNotFollowExistingLinks(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "sub")); err != nil {
		t.Skip(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "sub/x", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644})
	tw.Write([]byte("x"))
	tw.Close()
	if err := client.Untar(&buf, dir); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Fatal("a file was written through the link")
	}
}

func TestCreateExperimentStreamsMultipartWithProgress(t *testing.T) {
	t.Parallel()
	payload := bytes.Repeat([]byte("0123456789abcdef"), 200_000) // 3.2 MB
	var got map[string][]string
	var gotContext []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || r.URL.Path != "/api/v1/experiments" || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "bad request", 400)
			return
		}
		got = map[string][]string{}
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(p)
			if p.FormName() == "context" {
				gotContext = b
				continue
			}
			got[p.FormName()] = append(got[p.FormName()], string(b))
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"experiment": {"id": 7, "state": "PAUSED"}, "warnings": ["old key"]}`)
	}))
	defer srv.Close()

	c := client.New(srv.URL, client.WithToken("tok"))
	var calls []int64
	paused := false
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{
		Config: "name: x\n", Template: "team", Overrides: []string{"a=1", "b=2"}, ProjectID: 3}, Activate: &paused}
	resp, err := c.CreateExperiment(context.Background(), req, bytes.NewReader(payload), int64(len(payload)),
		func(n int64) { calls = append(calls, n) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Experiment.ID != 7 || len(resp.Warnings) != 1 {
		t.Errorf("response %+v", resp)
	}
	want := map[string][]string{"config": {"name: x\n"}, "template": {"team"}, "override": {"a=1", "b=2"},
		"project_id": {"3"}, "paused": {"true"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("form fields (-want +got):\n%s", diff)
	}
	if !bytes.Equal(gotContext, payload) {
		t.Errorf("context part: %d bytes, want %d", len(gotContext), len(payload))
	}
	if len(calls) < 2 || calls[len(calls)-1] != int64(len(payload)) || !sort.SliceIsSorted(calls, func(i, j int) bool { return calls[i] < calls[j] }) {
		t.Errorf("progress calls %d, last %v", len(calls), calls[len(calls)-1:])
	}
}

func TestCreateExperimentReportsAnEarlyRefusal(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		io.WriteString(w, `{"error": {"code": "too_large", "message": "the upload is too large"}}`)
	}))
	defer srv.Close()
	big := io.LimitReader(zeros{}, 64<<20)
	_, err := client.New(srv.URL).CreateExperiment(context.Background(), resolute.CreateExperimentRequest{}, big, 64<<20, nil)
	if resolute.ErrorCode(err) != resolute.ETooLarge {
		t.Fatalf("err = %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
