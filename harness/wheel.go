package harness

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// A Wheel is the package as a pure-Python wheel (py3-none-any), so people
// install the SDK outside a task with pip, offline, from the master.
type Wheel struct {
	Version string // PEP 440, e.g. 0.38.1+resolute.0.1.0.dev
	Name    string // the file name pip needs, e.g. determined-0.38.1+resolute.0.1.0.dev-py3-none-any.whl
	Data    []byte
	SHA256  string // hex, of Data
}

var versionLine = regexp.MustCompile(`(?m)^__version__ = "([^"]*)"$`)

// WheelVersion is the wheel's version for a master of masterVersion: the
// package's own __version__ (Determined's release it follows, with a local
// label) extended by the master's version, so that a newer master's wheel
// sorts newer and pip upgrades to it.
func WheelVersion(masterVersion string) string {
	base := "0.38.1+resolute"
	if init, err := Files.ReadFile("determined/__init__.py"); err == nil {
		if m := versionLine.FindSubmatch(init); m != nil {
			base = string(m[1])
		}
	}
	label := strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(masterVersion), "."), ".")
	if label == "" {
		return base
	}
	if strings.Contains(base, "+") {
		return base + "." + label
	}
	return base + "+" + label
}

var (
	wheelMu    sync.Mutex
	wheelCache = map[string]*Wheel{}
)

// BuildWheel returns the wheel for a master of masterVersion. The files are
// the embedded package, with __version__ set to the wheel's version, and
// fixed times, so the same master always serves the same bytes. It is built
// once per version and kept.
func BuildWheel(masterVersion string) (*Wheel, error) {
	version := WheelVersion(masterVersion)
	wheelMu.Lock()
	defer wheelMu.Unlock()
	if w, ok := wheelCache[version]; ok {
		return w, nil
	}
	w, err := buildWheel(version)
	if err != nil {
		return nil, err
	}
	wheelCache[version] = w
	return w, nil
}

func buildWheel(version string) (*Wheel, error) {
	type entry struct {
		name string
		data []byte
	}
	var files []entry
	err := fs.WalkDir(Files, "determined", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := Files.ReadFile(path)
		if err != nil {
			return err
		}
		if path == "determined/__init__.py" {
			data = versionLine.ReplaceAll(data, []byte(`__version__ = "`+version+`"`))
		}
		files = append(files, entry{path, data})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	info := "determined-" + version + ".dist-info/"
	files = append(files,
		entry{info + "METADATA", []byte("Metadata-Version: 2.1\nName: determined\nVersion: " + version + "\n" +
			"Summary: Determined's Python package (Core API, PyTorch Trial API, SDK) as served by a Resolute master\n" +
			"Requires-Python: >=3.8\n")},
		entry{info + "WHEEL", []byte("Wheel-Version: 1.0\nGenerator: resolute\nRoot-Is-Purelib: true\nTag: py3-none-any\n")},
		entry{info + "top_level.txt", []byte("determined\n")},
	)
	var record strings.Builder
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	stamp := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	write := func(name string, data []byte) error {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: stamp})
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		return err
	}
	for _, f := range files {
		if err := write(f.name, f.data); err != nil {
			return nil, err
		}
		sum := sha256.Sum256(f.data)
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.data))
	}
	record.WriteString(info + "RECORD,,\n")
	if err := write(info+"RECORD", []byte(record.String())); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(buf.Bytes())
	return &Wheel{Version: version, Name: "determined-" + version + "-py3-none-any.whl",
		Data: buf.Bytes(), SHA256: fmt.Sprintf("%x", sum)}, nil
}
