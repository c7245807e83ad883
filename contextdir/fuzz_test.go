package contextdir_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"io/fs"
	"maps"
	"slices"
	"testing"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/contextdir"
)

// tarSeeds are tars (uncompressed: the fuzzer changes their headers, not
// the deflate stream) that keep and that break the rules.
func tarSeeds(t testing.TB) [][]byte {
	return [][]byte{
		nil, []byte("not a tar"),
		tarOf(t, dir("model"), file("model/train.py", "print(1)"), symlink("l", "model/train.py"), hardlink("h", "model/train.py")),
		tarOf(t, symlink("a", "b/.."), symlink("b", ".")),
		tarOf(t, symlink("l1", "l2"), symlink("l2", "../x")),
		tarOf(t, dir("a"), symlink("a/up", ".."), symlink("b", "a/up/..")),
		tarOf(t, dir("d"), symlink("d", "..")),
		tarOf(t, symlink("d", "."), file("d/f", "x")),
		tarOf(t, file("../evil", "x")),
		tarOf(t, hardlink("h", "f"), file("f", "x")),
		tarOf(t, file("f", "x"), hardlink("h", "f"), hardlink("h2", "h")),
		tarOf(t, file("a", "x"), entry{name: "b", body: "y", size: 100}),
		tarOf(t, entry{name: "pax_global_header", typ: tar.TypeXGlobalHeader}, file("a.py", "x")),
	}
}

// FuzzUnpackTar checks, for any tar (gzipped here, as uploads come), that
// the upload check and the launch's unpacking agree, and that unpacking
// never writes outside its directory.
func FuzzUnpackTar(f *testing.F) {
	for _, s := range tarSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if declaredBytes(data) > 8<<20 {
			return // large files are the table tests' (and each run must stay fast)
		}
		archive := gzipped(data)
		checkErr := contextdir.Check(bytes.NewReader(archive))
		_, unpackErr, beside := unpack(t, archive)
		if len(beside) > 0 {
			t.Fatalf("unpacking wrote beside the work dir: %v", beside)
		}
		if (checkErr == nil) != (unpackErr == nil) || resolute.ErrorMessage(checkErr) != resolute.ErrorMessage(unpackErr) {
			t.Fatalf("check: %v; unpack: %v; want the same answer", checkErr, unpackErr)
		}
		if checkErr != nil && resolute.ErrorCode(checkErr) == resolute.EInternal {
			t.Fatalf("check: %v is not a refusal with a code", checkErr)
		}
	})
}

// declaredBytes is what the files of a tar say they hold, as far as it
// reads.
func declaredBytes(data []byte) int64 {
	tr := tar.NewReader(bytes.NewReader(data))
	var n int64
	for {
		h, err := tr.Next()
		if err != nil {
			return n
		}
		n += max(h.Size, 0)
	}
}

// zipOf packs entries in the order of their names (mode 0 means a file of
// mode 0644) as a zip.
func zipOf(t testing.TB, entries map[string]fs.FileMode) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		mode := entries[name]
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if mode.IsRegular() || mode&fs.ModeSymlink != 0 {
			w.Write([]byte("content of " + name))
		}
	}
	zw.Close()
	return buf.Bytes()
}

// FuzzZipToTar checks, for any bytes, that the web form's zip conversion
// fails cleanly or makes an archive that the upload check accepts and a
// launch unpacks.
func FuzzZipToTar(f *testing.F) {
	f.Add([]byte("PK\x05\x06" + string(make([]byte, 18))))
	f.Add(zipOf(f, map[string]fs.FileMode{"model/": fs.ModeDir | 0o755, "model/train.py": 0, `win\path.py`: 0}))
	f.Add(zipOf(f, map[string]fs.FileMode{"../evil.py": 0}))
	f.Add(zipOf(f, map[string]fs.FileMode{"C:/evil.py": 0}))
	f.Add(zipOf(f, map[string]fs.FileMode{"link": fs.ModeSymlink | 0o777}))
	f.Add(zipOf(f, map[string]fs.FileMode{"a": 0, "a/b": 0}))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		err := contextdir.FromZip(&out, bytes.NewReader(data))
		if err != nil {
			if resolute.ErrorCode(err) == resolute.EInternal {
				t.Fatalf("FromZip: %v is not a refusal with a code", err)
			}
			return
		}
		if err := contextdir.Check(bytes.NewReader(out.Bytes())); err != nil {
			t.Fatalf("the check refuses what FromZip made: %v", err)
		}
		if _, err, beside := unpack(t, out.Bytes()); err != nil || len(beside) > 0 {
			t.Fatalf("unpacking what FromZip made: %v (beside the work dir: %v)", err, beside)
		}
	})
}
