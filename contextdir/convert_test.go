package contextdir_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/contextdir"
)

// names lists the entries of a gzipped tar.
func names(t *testing.T, tgz []byte) []string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		out = append(out, h.Name)
	}
	slices.Sort(out)
	return out
}

func TestFromZip(t *testing.T) {
	tests := map[string]struct {
		zip     []byte
		want    []string
		refused string
	}{
		"files and directories are repacked, backslashes read as slashes": {
			zip:  zipOf(t, map[string]fs.FileMode{"model/": fs.ModeDir | 0o755, "model/train.py": 0, `model\util.py`: 0}),
			want: []string{"model/", "model/train.py", "model/util.py"},
		},
		"a name climbing out is refused, named": {
			zip: zipOf(t, map[string]fs.FileMode{"../evil.py": 0}), refused: `"../evil.py": paths must stay inside the context directory`,
		},
		"a drive letter is refused": {zip: zipOf(t, map[string]fs.FileMode{`C:\evil.py`: 0}), refused: `names a drive`},
		"a link is refused": {
			zip: zipOf(t, map[string]fs.FileMode{"link": fs.ModeSymlink | 0o777}), refused: `"link": only files and directories`,
		},
		"a file under a file is refused by the rules of every upload": {
			zip: zipOf(t, map[string]fs.FileMode{"a": 0, "a/b": 0}), refused: `"a/b": "a" is a file`,
		},
		"bytes that are no zip are refused": {zip: []byte("PK\x03\x04 but nothing more"), refused: "not a readable zip archive"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := contextdir.FromZip(&out, bytes.NewReader(tc.zip))
			if tc.refused != "" {
				if resolute.ErrorCode(err) != resolute.EInvalid || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("FromZip: %v; want invalid saying %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, names(t, out.Bytes())); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if err := contextdir.Check(&out); err != nil {
				t.Errorf("the check refuses the repacked zip: %v", err)
			}
		})
	}
}

// A zip's central directory is read whole into memory by archive/zip; one
// that could list more entries than a context may hold is refused first.
func TestAZipThatCouldHoldTooManyEntriesIsRefusedBeforeItIsRead(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "records.bin", Method: zip.Store})
	w.Write(bytes.Repeat([]byte("PK\x01\x02"), contextdir.MaxEntries))
	zw.Close()
	err := contextdir.FromZip(io.Discard, bytes.NewReader(buf.Bytes()))
	if resolute.ErrorCode(err) != resolute.ETooLarge {
		t.Fatalf("FromZip: %v; want too_large", err)
	}
}

func TestNormalizeKeepsATarGzAndConvertsTheRest(t *testing.T) {
	dir := t.TempDir()
	spool := func(b []byte) *contextdir.File {
		f, err := contextdir.Spool(dir, bytes.NewReader(b), contextdir.MaxArchiveBytes)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	tgz := tarGz(t, file("train.py", "print(1)"))
	zr, _ := gzip.NewReader(bytes.NewReader(tgz))
	plain, _ := io.ReadAll(zr)
	for name, in := range map[string][]byte{
		"a tar.gz stays itself": tgz, "a plain tar is compressed": plain,
		"a zip is repacked": zipOf(t, map[string]fs.FileMode{"train.py": 0}),
	} {
		t.Run(name, func(t *testing.T) {
			f := spool(in)
			out, err := contextdir.Normalize(dir, f)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			if (out == f) != strings.Contains(name, "stays") {
				t.Errorf("Normalize gave back the same file: %v", out == f)
			}
			b, _ := io.ReadAll(contextdir.Reader(out))
			if diff := cmp.Diff([]string{"train.py"}, names(t, b)); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := contextdir.Normalize(dir, spool([]byte("#!/bin/sh\necho not an archive\n"))); !strings.Contains(resolute.ErrorMessage(err), "expected a .tar.gz, .tgz, .tar or .zip archive") {
		t.Errorf("a script: %v; want it refused as no archive", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("temporary files left with names in the directory: %v", entries)
	}
}

func TestSpoolRefusesMoreThanItsLimit(t *testing.T) {
	dir := t.TempDir()
	f, err := contextdir.Spool(dir, strings.NewReader("12345"), 4)
	if resolute.ErrorCode(err) != resolute.ETooLarge || f != nil {
		t.Fatalf("Spool of 5 bytes with a limit of 4: %v", err)
	}
	f, err = contextdir.Spool(dir, strings.NewReader("1234"), 4)
	if err != nil || f.Size() != 4 {
		t.Fatalf("Spool of 4 bytes: %v", err)
	}
	defer f.Close()
	b, _ := io.ReadAll(contextdir.Reader(f))
	if string(b) != "1234" {
		t.Errorf("read back %q", b)
	}
}

func TestFillReplacesWhatAFileHeld(t *testing.T) {
	f, err := contextdir.Spool(t.TempDir(), strings.NewReader("a longer first file"), 100)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Fill(strings.NewReader("second"), 100); err != nil || f.Size() != 6 {
		t.Fatalf("Fill: %v, %d bytes", err, f.Size())
	}
	if b, _ := io.ReadAll(contextdir.Reader(f)); string(b) != "second" {
		t.Errorf("read back %q", b)
	}
}
