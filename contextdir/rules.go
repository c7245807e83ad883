package contextdir

import (
	"archive/tar"
	"path"
	"strings"

	"github.com/resolute-ml/resolute"
)

// Limits of a context directory.
const (
	// MaxArchiveBytes is the most a context archive may take, gzipped
	// (Determined's 96 MiB).
	MaxArchiveBytes = 96 << 20
	// MaxUnpackedBytes is the most its files may take together, unpacked.
	MaxUnpackedBytes = 4 * MaxArchiveBytes
	// MaxEntries is the most entries (files, directories, links) it may hold.
	MaxEntries = 100_000
	// MaxNameBytes is the longest name of an entry or target of a link.
	MaxNameBytes = 1024
	// MaxNamesBytes is the most its names and link targets may take together.
	MaxNamesBytes = 16 << 20
)

// maxPartBytes is the longest part of a name Linux file systems take.
const maxPartBytes = 255

// maxHardLinks is how many names a file may have: file systems cap it
// (ext4 at 65,000), and no code needs many.
const maxHardLinks = 1000

// maxLinkHops is how many links the kernel follows in one lookup (Linux's
// MAXSYMLINKS) before it gives up with ELOOP.
const maxLinkHops = 40

// kind is what an entry of the tree is.
type kind uint8

const (
	kindDir kind = iota + 1
	kindFile
	kindLink
)

// node is one entry of the tree: a directory, a file (with its number of
// names), or a symbolic link to target.
type node struct {
	kind   kind
	target string
	names  *int // shared by the names of one file
}

// tree is the directory an archive unpacks to, as far as the rules need to
// know it: every entry's kind by its clean name. The directory itself ("")
// is not in it.
type tree struct {
	nodes   map[string]node
	links   []string // the symbolic links, in archive order
	entries int
	bytes   int64 // of the files
	names   int64 // of the names and link targets
}

func newTree() *tree { return &tree{nodes: map[string]node{}} }

// Entry is one entry of an archive that the rules accepted.
type Entry struct {
	Name string // clean, relative, slash-separated
	Type byte   // tar.TypeReg, tar.TypeDir, tar.TypeSymlink or tar.TypeLink
	// Link is a symbolic link's target as written, or the clean name of the
	// file a hard link names.
	Link string
	Mode int64 // permission bits
	Size int64 // of a regular file
}

// invalid is a refusal of the archive, saying which entry breaks which rule.
func invalid(format string, args ...any) error {
	return resolute.Errorf(resolute.EInvalid, "context: "+format, args...)
}

// tooLarge is a refusal of an archive over a limit.
func tooLarge(format string, args ...any) error {
	return resolute.Errorf(resolute.ETooLarge, "context: "+format, args...)
}

// add checks one tar header against the rules and what came before it, and
// records it. skip says the entry is nothing to unpack ("./", a pax global
// header).
func (t *tree) add(h *tar.Header) (e Entry, skip bool, err error) {
	switch h.Typeflag {
	case tar.TypeReg, tar.TypeDir, tar.TypeSymlink, tar.TypeLink:
	case tar.TypeXGlobalHeader:
		return e, true, nil
	default:
		return e, false, invalid("%q: only files, directories and links may be uploaded (its type is %s)", h.Name, typeName(h.Typeflag))
	}
	name, err := cleanName(h.Name)
	if err != nil {
		return e, false, err
	}
	if name == "" {
		if h.Typeflag == tar.TypeDir {
			return e, true, nil // "./": the directory itself
		}
		return e, false, invalid("%q names the context directory itself", h.Name)
	}
	if t.entries++; t.entries > MaxEntries {
		return e, false, tooLarge("holds more than %d entries", MaxEntries)
	}
	if t.names += int64(len(name) + len(h.Linkname)); t.names > MaxNamesBytes {
		return e, false, tooLarge("its names take more than %d MiB together", MaxNamesBytes>>20)
	}
	if err := t.checkParents(name); err != nil {
		return e, false, err
	}
	e = Entry{Name: name, Type: h.Typeflag, Mode: h.Mode & 0o777}
	if old, ok := t.nodes[name]; ok {
		if old.kind == kindDir && h.Typeflag == tar.TypeDir {
			return e, false, nil // a directory again: nothing changes
		}
		return e, false, invalid("%q appears twice in the archive; a later entry may not replace an earlier one", name)
	}
	switch h.Typeflag {
	case tar.TypeReg:
		if t.bytes += h.Size; h.Size < 0 || t.bytes > MaxUnpackedBytes {
			return e, false, tooLarge("unpacks to more than %d MiB", MaxUnpackedBytes>>20)
		}
		e.Size = h.Size
		t.nodes[name] = node{kind: kindFile, names: new(1)}
	case tar.TypeDir:
		t.nodes[name] = node{kind: kindDir}
	case tar.TypeSymlink:
		if err := checkTarget(name, h.Linkname); err != nil {
			return e, false, err
		}
		e.Link = h.Linkname
		t.nodes[name] = node{kind: kindLink, target: h.Linkname}
		t.links = append(t.links, name)
	case tar.TypeLink:
		target, err := cleanName(h.Linkname)
		file := t.nodes[target]
		if err != nil || target == "" || file.kind != kindFile {
			return e, false, invalid("%q is a hard link to %q, which is not a file that comes before it in the archive", name, h.Linkname)
		}
		if *file.names++; *file.names > maxHardLinks {
			return e, false, invalid("%q: %q would have more than %d names (hard links)", name, target, maxHardLinks)
		}
		e.Link = target
		t.nodes[name] = file // the same file: its names counted together
	}
	return e, false, nil
}

// checkParents checks that every directory above name is a directory, or
// missing (it will be made), and records the missing ones.
func (t *tree) checkParents(name string) error {
	for i := 0; i < len(name); i++ {
		if name[i] != '/' {
			continue
		}
		dir := name[:i]
		switch t.nodes[dir].kind {
		case 0:
			t.nodes[dir] = node{kind: kindDir}
		case kindDir:
		case kindLink:
			return invalid("%q: its directory %q is a link; entries may not be written through links", name, dir)
		default:
			return invalid("%q: %q is a file, not a directory", name, dir)
		}
	}
	return nil
}

// cleanName checks an entry's name and returns it clean ("" for the
// directory itself).
func cleanName(name string) (string, error) {
	switch {
	case name == "":
		return "", invalid("an entry has no name")
	case strings.ContainsRune(name, 0):
		return "", invalid("%q: names may not hold NUL bytes", name)
	case strings.HasPrefix(name, "/"):
		return "", invalid("%q: paths must stay inside the context directory (it is absolute)", name)
	case len(name) > MaxNameBytes:
		return "", invalid("%.64q...: names may be at most %d bytes long", name, MaxNameBytes)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", invalid("%q: paths must stay inside the context directory (no ..)", name)
		}
		if len(part) > maxPartBytes {
			return "", invalid("%q: a part of a name may be at most %d bytes long", name, maxPartBytes)
		}
	}
	clean := path.Clean(name)
	if clean == "." {
		clean = ""
	}
	return clean, nil
}

// checkTarget checks a symbolic link's target by itself; where the link
// leads is checked once the whole archive is known (resolve).
func checkTarget(name, target string) error {
	switch {
	case target == "":
		return invalid("%q is a link to nothing", name)
	case strings.ContainsRune(target, 0):
		return invalid("%q links to a name with a NUL byte", name)
	case len(target) > MaxNameBytes:
		return invalid("%q links to a name longer than %d bytes", name, MaxNameBytes)
	case path.IsAbs(target):
		return invalid("%q links to %q, outside the context directory (an absolute path)", name, target)
	}
	return nil
}

// finish checks, once every entry is known, that every symbolic link stays
// inside the directory.
func (t *tree) finish() error {
	for _, l := range t.links {
		if err := t.resolve(l); err != nil {
			return err
		}
	}
	return nil
}

// resolve follows the path name as the kernel would: component by
// component from the directory, each link's target read from the
// directory holding the link, ".." going up from where the walk really is.
// It fails when the walk leaves the directory or meets too many links. A
// missing component is taken as a plain name, as the task may make it.
func (t *tree) resolve(name string) error {
	var real []string // where the walk is, free of links
	rest := strings.Split(name, "/")
	for hops := 0; len(rest) > 0; {
		part := rest[0]
		rest = rest[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			if len(real) == 0 {
				return invalid("%q leads outside the context directory (following its links)", name)
			}
			real = real[:len(real)-1]
			continue
		}
		n := t.nodes[path.Join(append(real, part)...)]
		if n.kind != kindLink {
			real = append(real, part)
			continue
		}
		if hops++; hops > maxLinkHops {
			return invalid("%q: following it meets more than %d links (a loop?)", name, maxLinkHops)
		}
		rest = append(strings.Split(n.target, "/"), rest...)
	}
	return nil
}

// typeName names a tar entry type for a person.
func typeName(flag byte) string {
	switch flag {
	case tar.TypeChar:
		return "a character device"
	case tar.TypeBlock:
		return "a block device"
	case tar.TypeFifo:
		return "a FIFO"
	case tar.TypeGNUSparse:
		return "a sparse file"
	case tar.TypeCont:
		return "a contiguous file"
	}
	return "type " + string(rune(flag))
}
