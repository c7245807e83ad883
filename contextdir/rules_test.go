package contextdir_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/contextdir"
)

// entry is one entry of a test archive; typ 0 is a regular file.
type entry struct {
	name, body, link string
	typ              byte
	size             int64 // a file's size when not len(body): a header that lies
}

func file(name, body string) entry        { return entry{name: name, body: body} }
func dir(name string) entry               { return entry{name: name, typ: tar.TypeDir} }
func symlink(name, to string) entry       { return entry{name: name, link: to, typ: tar.TypeSymlink} }
func hardlink(name, to string) entry      { return entry{name: name, link: to, typ: tar.TypeLink} }
func special(name string, typ byte) entry { return entry{name: name, typ: typ} }

// tarOf packs entries as a tar, as written: the test archives break the
// rules on purpose.
func tarOf(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: 0o644, Format: tar.FormatPAX}
		if e.typ == tar.TypeXGlobalHeader {
			h = &tar.Header{Typeflag: e.typ, PAXRecords: map[string]string{"comment": "a commit id"}}
		}
		if e.typ == 0 {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.body))
		}
		if e.size != 0 {
			h.Size = e.size
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		if e.size != 0 {
			return buf.Bytes() // the archive ends here, inside the file
		}
		tw.Write([]byte(e.body))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// gzipped compresses b.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// tarGz packs entries as a gzipped tar.
func tarGz(t testing.TB, entries ...entry) []byte { return gzipped(tarOf(t, entries...)) }

// unpack runs Unpack into a fresh work dir and returns the dir, the error,
// and what (if anything) appeared beside the work dir.
func unpack(t testing.TB, archive []byte) (string, error, []string) {
	t.Helper()
	base := t.TempDir()
	work := filepath.Join(base, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(work)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	uerr := contextdir.Unpack(root, bytes.NewReader(archive))
	var beside []string
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		if e.Name() != "work" {
			beside = append(beside, e.Name())
		}
	}
	return work, uerr, beside
}

// TestWhatTheUploadCheckAcceptsALaunchUnpacks runs the upload check (Check)
// and the launch's unpacking (Unpack) on the same archives: both accept, or
// both refuse with the same message, which names the entry.
func TestWhatTheUploadCheckAcceptsALaunchUnpacks(t *testing.T) {
	tests := map[string]struct {
		entries []entry
		want    map[string]string // accepted: path → content read through the work dir
		refused string            // refused: part of the message, naming the entry
		code    string            // refused: the error code, invalid unless said
	}{
		"files, directories and links that stay inside are unpacked": {
			entries: []entry{dir("./"), dir("./model/"), file("./model/train.py", "print(1)"), file("model/cfg.yaml", "a: 1"),
				symlink("model/link.py", "train.py"), symlink("up.py", "model/../model/train.py"),
				hardlink("hard.py", "./model/train.py"), symlink("chain.py", "up.py"), symlink("here", "."),
				symlink("model/top", ".."), symlink("via-top.py", "model/top/model/train.py"), dir("model")},
			want: map[string]string{"model/train.py": "print(1)", "model/cfg.yaml": "a: 1", "model/link.py": "print(1)",
				"up.py": "print(1)", "hard.py": "print(1)", "chain.py": "print(1)", "here/model/train.py": "print(1)",
				"via-top.py": "print(1)"},
		},
		"a link to a name the archive does not have stays a link": {
			entries: []entry{symlink("data", "missing/file")},
			want:    map[string]string{},
		},
		"a pax global header, as git archive writes, is skipped": {
			entries: []entry{{name: "pax_global_header", typ: tar.TypeXGlobalHeader}, file("a.py", "x")},
			want:    map[string]string{"a.py": "x"},
		},
		"nothing at all is an empty context": {want: map[string]string{}},

		"a name with .. is refused":                           {entries: []entry{file("a/../../evil", "x")}, refused: `"a/../../evil": paths must stay inside`},
		"an absolute name is refused":                         {entries: []entry{file("/tmp/evil", "x")}, refused: `"/tmp/evil": paths must stay inside`},
		"a name of the directory itself as a file is refused": {entries: []entry{file(".", "x")}, refused: `"." names the context directory itself`},
		"an absolute link is refused":                         {entries: []entry{symlink("passwd", "/etc/passwd")}, refused: `"passwd" links to "/etc/passwd"`},
		"a link climbing out is refused":                      {entries: []entry{symlink("a/up", "../../outside")}, refused: `"a/up" leads outside`},
		"a link to nothing is refused":                        {entries: []entry{symlink("l", "")}, refused: `"l" is a link to nothing`},
		"a link to itself is refused":                         {entries: []entry{symlink("l", "l")}, refused: `"l": following it meets more than 40 links`},
		"a device is refused":                                 {entries: []entry{special("dev", tar.TypeChar)}, refused: `"dev": only files, directories and links`},
		"a FIFO is refused":                                   {entries: []entry{special("fifo", tar.TypeFifo)}, refused: `"fifo": only files, directories and links`},
		"a part of a name over 255 bytes is refused": {
			entries: []entry{file(strings.Repeat("x", 256), "")}, refused: "a part of a name may be at most 255 bytes",
		},
		"a link whose chain leads out is refused: a -> b/.., b -> .": {
			entries: []entry{symlink("a", "b/.."), symlink("b", ".")}, refused: `"a" leads outside the context directory`,
		},
		"a link to a link to outside is refused": {
			entries: []entry{symlink("l1", "l2"), symlink("l2", "sub/l3"), dir("sub"), symlink("sub/l3", "../../x")},
			refused: `"l1" leads outside the context directory`,
		},
		"a link through a link that climbs is refused": {
			entries: []entry{dir("a"), symlink("a/up", ".."), symlink("b", "a/up/..")}, refused: `"b" leads outside`,
		},
		"a link a later entry makes escape is refused": {
			entries: []entry{symlink("l", "d/../outside"), symlink("d", ".")}, refused: `"l" leads outside`,
		},
		"a directory replaced by a link later in the archive is refused": {
			entries: []entry{dir("d"), file("d/f", "x"), symlink("d", "..")}, refused: `"d" appears twice in the archive`,
		},
		"a link replaced by a file later in the archive is refused": {
			entries: []entry{symlink("l", "x"), file("l", "y")}, refused: `"l" appears twice`,
		},
		"a file twice is refused": {entries: []entry{file("a", "1"), file("./a", "2")}, refused: `"a" appears twice`},
		"an entry written through a link is refused": {
			entries: []entry{dir("sub"), symlink("d", "sub"), file("d/f", "x")}, refused: `"d/f": its directory "d" is a link`,
		},
		"an entry under a file is refused": {entries: []entry{file("f", "x"), file("f/g", "y")}, refused: `"f/g": "f" is a file`},
		"a hard link to outside is refused": {
			entries: []entry{hardlink("h", "../outside")}, refused: `"h" is a hard link to "../outside"`,
		},
		"a hard link to a file later in the archive is refused": {
			entries: []entry{hardlink("h", "f"), file("f", "x")}, refused: `"h" is a hard link to "f"`,
		},
		"a hard link to a directory is refused": {entries: []entry{dir("d"), hardlink("h", "d")}, refused: `"h" is a hard link to "d"`},
		"a hard link to a link is refused": {
			entries: []entry{symlink("l", "x"), hardlink("h", "l")}, refused: `"h" is a hard link to "l"`,
		},
		"a file of more than 1000 names, counted through any of them, is refused": {
			entries: manyHardLinks(1000), refused: `"h999": "h0" would have more than 1000 names`,
		},
		"an archive that ends inside a file is refused": {
			entries: []entry{file("a.py", "x"), {name: "big.bin", body: "abc", size: 1 << 20}}, refused: `"big.bin": the archive breaks inside it`,
		},
		"an archive of more than 384 MiB of files is too large": {
			entries: []entry{{name: "huge.bin", size: contextdir.MaxUnpackedBytes + 1}}, refused: "unpacks to more than 384 MiB", code: resolute.ETooLarge,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var archive []byte
			if tc.entries != nil {
				archive = tarGz(t, tc.entries...)
			}
			checkErr := contextdir.Check(bytes.NewReader(archive))
			work, unpackErr, beside := unpack(t, archive)
			if len(beside) > 0 {
				t.Errorf("unpacking wrote beside the work dir: %v", beside)
			}
			if tc.refused == "" {
				if checkErr != nil || unpackErr != nil {
					t.Fatalf("check: %v; unpack: %v; want both to accept", checkErr, unpackErr)
				}
				got := map[string]string{}
				for p := range tc.want {
					b, err := os.ReadFile(filepath.Join(work, p))
					if err != nil {
						t.Errorf("read %s: %v", p, err)
					}
					got[p] = string(b)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("work dir (-want +got):\n%s", diff)
				}
				return
			}
			code := tc.code
			if code == "" {
				code = resolute.EInvalid
			}
			msg := resolute.ErrorMessage(checkErr)
			if resolute.ErrorCode(checkErr) != code || !strings.Contains(msg, tc.refused) || !strings.HasPrefix(msg, "context: ") {
				t.Errorf("check: %v (%s); want %s saying %q", checkErr, resolute.ErrorCode(checkErr), code, tc.refused)
			}
			if resolute.ErrorMessage(unpackErr) != msg || resolute.ErrorCode(unpackErr) != code {
				t.Errorf("unpack: %v; want the check's %q", unpackErr, msg)
			}
		})
	}
}

// manyHardLinks is a file f, a hard link h0 to it, and n-1 more to h0.
func manyHardLinks(n int) []entry {
	entries := []entry{file("f", "x"), hardlink("h0", "f")}
	for i := 1; i < n; i++ {
		entries = append(entries, hardlink("h"+strconv.Itoa(i), "h0"))
	}
	return entries
}

func TestAnArchiveOfTooManyEntriesIsTooLarge(t *testing.T) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	for i := range contextdir.MaxEntries + 1 {
		tw.WriteHeader(&tar.Header{Name: "d" + strings.Repeat("/d", i%50) + "/" + strconv.Itoa(i), Typeflag: tar.TypeReg})
	}
	tw.Close()
	zw.Close()
	err := contextdir.Check(&buf)
	if resolute.ErrorCode(err) != resolute.ETooLarge || !strings.Contains(err.Error(), "more than 100000 entries") {
		t.Fatalf("check: %v; want too_large, more than 100000 entries", err)
	}
}
