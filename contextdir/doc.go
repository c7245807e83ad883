// Package contextdir holds the rules of a context directory: the gzipped tar
// of a task's code that users upload and that every launch unpacks into the
// task's work directory. The upload check (Check) and the unpacking at
// launch (Unpack) walk an archive with the same rules in the same code, so
// that what an upload is accepted with, a launch unpacks.
//
// # The rules
//
//   - Entries are regular files, directories, symbolic links and hard links;
//     a pax global header (git archive writes one) is skipped. Anything else
//     (devices, FIFOs, old GNU sparse entries) is refused.
//   - Names are relative, without "..", without NUL, at most MaxNameBytes
//     long with no part longer than 255 bytes; "./" (the directory itself)
//     is skipped.
//   - An entry is never written through a link: no entry's directory may be
//     a symbolic link or a file.
//   - A name appears once; only a directory may repeat a directory. So no
//     later entry replaces an earlier one (a directory turned into a link,
//     a link into a file).
//   - A hard link names a regular file that comes before it; a file has at
//     most 1000 names (file systems cap them).
//   - A symbolic link's target is relative, and once the whole archive is
//     known, following the link the way the kernel would (each link in a
//     chain from the directory it is in, ".." after a link from where the
//     link led, at most 40 links) stays inside the directory.
//   - At most MaxEntries entries, MaxUnpackedBytes of files and
//     MaxNamesBytes of names and link targets together.
//
// Unpack writes only through an os.Root, so even a rule missed here could
// not write outside the work directory.
//
// # What it does not do
//
// It knows nothing of experiments, tasks or the database, and does not
// decide where archives are stored: it reads them from an io.Reader and
// writes them to an io.Writer or an os.Root. File spools an upload in a
// temporary file of a directory its caller names.
package contextdir
