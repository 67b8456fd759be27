package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// entry is one member of an archive: a directory, or a regular file whose
// content is Data or, when Data is nil, the file at Src.
type entry struct {
	Name string // slash-separated, relative, no trailing slash
	Dir  bool
	Mode int64 // permission bits, 0o1000 the sticky bit
	UID  int   // owner; names follow (0: root, else cardsync)
	GID  int
	Src  string
	Data []byte
}

// owner names the user and group ids an archive uses.
func owner(id int) string {
	if id == 0 {
		return "root"
	}
	return "cardsync"
}

// fileEntry is the file at src stored as name: 0755 when src is
// executable by its owner, else 0644, owned by root.
func fileEntry(name, src string) (entry, error) {
	fi, err := os.Stat(src)
	if err != nil {
		return entry{}, err
	}
	if !fi.Mode().IsRegular() {
		return entry{}, fmt.Errorf("%s: not a regular file", src)
	}
	mode := int64(0o644)
	if fi.Mode()&0o100 != 0 {
		mode = 0o755
	}
	return entry{Name: name, Mode: mode, Src: src}, nil
}

// withParents returns entries sorted by name, with a root-owned 0755
// directory entry added for every parent not listed. Two entries of one
// name are an error.
func withParents(entries []entry) ([]entry, error) {
	byName := map[string]entry{}
	for _, e := range entries {
		if e.Name == "" || path.IsAbs(e.Name) || path.Clean(e.Name) != e.Name || e.Name == ".." || strings.HasPrefix(e.Name, "../") {
			return nil, fmt.Errorf("archive entry %q: want a clean relative path", e.Name)
		}
		if _, dup := byName[e.Name]; dup {
			return nil, fmt.Errorf("archive entry %q listed twice", e.Name)
		}
		byName[e.Name] = e
	}
	for _, e := range entries {
		for dir := path.Dir(e.Name); dir != "."; dir = path.Dir(dir) {
			if _, ok := byName[dir]; !ok {
				byName[dir] = entry{Name: dir, Dir: true, Mode: 0o755}
			}
		}
	}
	out := make([]entry, 0, len(byName))
	for _, e := range byName {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// writeTar writes entries (and their parent directories) as a tar stream:
// sorted by name, every time mtime, numeric and named owners as the entry
// says, no access or change times, so the same inputs give the same bytes.
func writeTar(w io.Writer, entries []entry, mtime time.Time) error {
	all, err := withParents(entries)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	for _, e := range all {
		h := &tar.Header{Name: e.Name, Mode: e.Mode, Uid: e.UID, Gid: e.GID, Uname: owner(e.UID), Gname: owner(e.GID),
			ModTime: mtime.UTC().Truncate(time.Second), Format: tar.FormatUSTAR}
		if e.Dir {
			h.Typeflag, h.Name = tar.TypeDir, e.Name+"/"
			if err := tw.WriteHeader(h); err != nil {
				return fmt.Errorf("tar %s: %w", e.Name, err)
			}
			continue
		}
		data := e.Data
		if data == nil {
			if data, err = os.ReadFile(e.Src); err != nil {
				return fmt.Errorf("tar %s: %w", e.Name, err)
			}
		}
		h.Typeflag, h.Size = tar.TypeReg, int64(len(data))
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("tar %s: %w", e.Name, err)
		}
		if _, err := tw.Write(data); err != nil {
			return fmt.Errorf("tar %s: %w", e.Name, err)
		}
	}
	return tw.Close()
}

// gzipBytes compresses b with a header that names no file and no time.
func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tarGz is writeTar's stream gzipped: the bytes of a .tar.gz.
func tarGz(entries []entry, mtime time.Time) ([]byte, error) {
	var raw bytes.Buffer
	if err := writeTar(&raw, entries, mtime); err != nil {
		return nil, err
	}
	return gzipBytes(raw.Bytes())
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, renamed over it once complete.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
