package local

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
)

type entry struct {
	name, body, link string
	typ              byte
}

func tarGz(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: 0o644, Size: int64(len(e.body))}
		if e.typ == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if h.Typeflag == tar.TypeDir {
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// contextOf serves an archive held in memory as a LaunchSpec's Context.
func contextOf(b []byte) func(context.Context) io.Reader {
	return func(context.Context) io.Reader { return bytes.NewReader(b) }
}

func TestFillWorkDir(t *testing.T) {
	tests := map[string]struct {
		entries  []entry
		files    map[string][]byte
		want     map[string]string // path → content, read through the work dir
		wantCode string
		wantMsg  string // part of the error's message
	}{
		"files, directories and links that stay inside are unpacked, and Files win": {
			entries: []entry{
				{name: "./", typ: tar.TypeDir},
				{name: "./model/", typ: tar.TypeDir},
				{name: "./model/train.py", body: "print(1)"},
				{name: "model/config.yaml", body: "from tar"},
				{name: "model/link.py", typ: tar.TypeSymlink, link: "train.py"},
				{name: "up.py", typ: tar.TypeSymlink, link: "model/../model/train.py"},
				{name: "hard.py", typ: tar.TypeLink, link: "model/train.py"},
			},
			files: map[string][]byte{"model/config.yaml": []byte("from Files"), "harness/det/__init__.py": []byte("")},
			want: map[string]string{
				"model/train.py": "print(1)", "model/config.yaml": "from Files", "model/link.py": "print(1)",
				"up.py": "print(1)", "hard.py": "print(1)", "harness/det/__init__.py": "",
			},
		},
		"a context the upload check refuses is refused alike, naming the entry": {
			entries: []entry{
				{name: "a", typ: tar.TypeSymlink, link: "b/.."},
				{name: "b", typ: tar.TypeSymlink, link: "."},
			},
			wantCode: "invalid", wantMsg: `context: "a" leads outside the context directory`,
		},
		"an entry written through a link is refused": {
			entries: []entry{
				{name: "d", typ: tar.TypeSymlink, link: "."},
				{name: "d/file", body: "inside"},
			},
			wantCode: "invalid", wantMsg: `its directory "d" is a link`,
		},
		"a device entry is rejected":         {entries: []entry{{name: "dev", typ: tar.TypeChar}}, wantCode: "invalid"},
		"a file name with .. is rejected":    {files: map[string][]byte{"../evil": nil}, wantCode: "invalid"},
		"an absolute file name is rejected":  {files: map[string][]byte{"/tmp/evil": nil}, wantCode: "invalid"},
		"a file name of the dir is rejected": {files: map[string][]byte{"./": nil}, wantCode: "invalid"},
		"a file written through an escaping link fails": {
			// Unpacked first by hand: fillWorkDir never makes such links.
			files: map[string][]byte{"out/evil": []byte("x")}, wantCode: "invalid",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "work")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(name, "escaping link") {
				if err := os.Symlink(base, filepath.Join(dir, "out")); err != nil {
					t.Fatal(err)
				}
			}
			var archive func(context.Context) io.Reader
			if tc.entries != nil {
				archive = contextOf(tarGz(t, tc.entries...))
			}
			err := func() error {
				for name := range tc.files {
					if err := checkRelPath(name); err != nil {
						return err
					}
				}
				return fillWorkDir(context.Background(), dir, archive, tc.files)
			}()
			if got := code(err); got != tc.wantCode {
				t.Fatalf("error %v: code %q, want %q", err, got, tc.wantCode)
			}
			if !strings.Contains(resolute.ErrorMessage(err), tc.wantMsg) {
				t.Errorf("error %q, want it to say %q", resolute.ErrorMessage(err), tc.wantMsg)
			}
			for _, p := range []string{"evil", "outside", "../evil"} {
				if _, err := os.Lstat(filepath.Join(base, p)); err == nil {
					t.Errorf("%s was written outside the work dir", p)
				}
			}
			got := map[string]string{}
			for p := range tc.want {
				b, err := os.ReadFile(filepath.Join(dir, p))
				if err != nil {
					t.Errorf("read %s: %v", p, err)
				}
				got[p] = string(b)
			}
			if diff := cmp.Diff(tc.want, got, cmpEmptyMap); diff != "" {
				t.Errorf("work dir (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpEmptyMap = cmp.FilterValues(func(a, b map[string]string) bool { return len(a) == 0 && len(b) == 0 },
	cmp.Comparer(func(a, b map[string]string) bool { return true }))

func TestLaunchRejectsBadFiles(t *testing.T) {
	tests := map[string]AllocationSpec{
		"a Files path with .. is rejected":               {Files: map[string][]byte{"../evil": []byte("x")}},
		"an absolute Files path is rejected":             {Files: map[string][]byte{"/evil": []byte("x")}},
		"a context archive that is not gzip is rejected": {Context: contextOf([]byte("not even gzip"))},
		"a relative work dir is rejected":                {WorkDir: "relative"},
		"both shell and entrypoint are rejected":         {Entrypoint: []string{"true"}},
		"a bad env name is rejected":                     {Env: map[string]string{"A=B": "c"}},
	}
	for name, s := range tests {
		t.Run(name, func(t *testing.T) {
			m := newManager(t, nil)
			base := spec(t, "bad", "true")
			s.AllocationID, s.Shell = base.AllocationID, base.Shell
			if s.WorkDir == "" {
				s.WorkDir = base.WorkDir
			}
			if got := code(m.Launch(context.Background(), s)); got != "invalid" {
				t.Errorf("code = %q, want invalid", got)
			}
			if n := len(m.Capacity().Allocations); n != 0 {
				t.Errorf("%d allocations after a rejected launch, want 0", n)
			}
		})
	}
}

func TestLaunchUnpacksContext(t *testing.T) {
	m := newManager(t, nil)
	s := spec(t, "ctx", "cat model/train.py; ls -ld . | cut -c1-10")
	s.Context = contextOf(tarGz(t, entry{name: "model/train.py", body: "print('hi')\n"}))
	launch(t, m, s)
	var got []string
	for _, l := range logs(untilExit(t, m, "ctx"), Stdout) {
		got = append(got, l.Line)
	}
	if diff := cmp.Diff([]string{"print('hi')", "drwx------"}, got); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
