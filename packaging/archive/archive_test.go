package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/internal/testbinary"
)

// writeFile writes a test input file with mode and mtime.
func writeFile(t *testing.T, path, content string, mode os.FileMode, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func TestTarballIsReproducible(t *testing.T) {
	epoch := time.Unix(1_790_000_000, 0)
	write := func(dir string, mtime time.Time) []byte {
		t.Helper()
		writeFile(t, filepath.Join(dir, "cardsync"), "binary", 0o700, mtime)
		writeFile(t, filepath.Join(dir, "README.md"), "readme", 0o600, mtime)
		writeFile(t, filepath.Join(dir, "systemd", "cardsync.service"), "unit", 0o664, mtime)
		out := filepath.Join(dir, "out.tar.gz")
		// Arguments in another order each time: the archive sorts.
		args := []string{"tar", "-o", out, "-mtime", "1790000000", "-prefix", "cardsync_v1_linux_amd64",
			"cardsync=" + filepath.Join(dir, "cardsync"), "systemd/cardsync.service=" + filepath.Join(dir, "systemd", "cardsync.service"),
			"README.md=" + filepath.Join(dir, "README.md")}
		if mtime.After(epoch) {
			args[7], args[9] = args[9], args[7]
		}
		if err := run(t.Context(), args, io.Discard); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := write(t.TempDir(), time.Now())
	second := write(t.TempDir(), time.Now().Add(time.Hour))
	if !bytes.Equal(first, second) {
		t.Fatal("two tarballs of the same inputs differ")
	}

	zr, err := gzip.NewReader(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header names %q at %v, want neither", zr.Name, zr.ModTime)
	}
	var got []string
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(epoch) || h.Uid != 0 || h.Gid != 0 || h.Uname != "root" || h.Gname != "root" {
			t.Errorf("%s: mtime %v owner %d:%d %s:%s, want %v 0:0 root:root", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname, h.Gname, epoch)
		}
		got = append(got, h.Name+" "+os.FileMode(h.Mode).String())
	}
	want := []string{
		"cardsync_v1_linux_amd64/ -rwxr-xr-x", // directories: 0755 (tar's mode has no type bits)
		"cardsync_v1_linux_amd64/README.md -rw-r--r--",
		"cardsync_v1_linux_amd64/cardsync -rwxr-xr-x",
		"cardsync_v1_linux_amd64/systemd/ -rwxr-xr-x",
		"cardsync_v1_linux_amd64/systemd/cardsync.service -rw-r--r--",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tarball lists\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestUnpackRefusesEscapes(t *testing.T) {
	for _, name := range []string{"../evil", "/etc/evil", "usr/../../evil"} {
		t.Run(name, func(t *testing.T) {
			var raw bytes.Buffer
			tw := tar.NewWriter(&raw)
			tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
			tw.Write([]byte("x"))
			tw.Close()
			gz, err := gzipBytes(raw.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			root := filepath.Join(dir, "root")
			if _, err := unpack(gz, root); err == nil || !strings.Contains(err.Error(), "outside the root") {
				t.Errorf("unpack of %q: %v, want a refusal", name, err)
			}
			if _, err := os.Stat(filepath.Join(dir, "evil")); err == nil {
				t.Errorf("unpack of %q wrote outside the root", name)
			}
		})
	}
}

// TestImageRunsItsEntrypoint builds cardsync for this machine, writes its
// image archive twice (byte-identical), reads it back as a runtime would,
// unpacks the rootfs and runs the entrypoint: version, then demo.
func TestImageRunsItsEntrypoint(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cardsync and runs its demo (-short)")
	}
	dir := t.TempDir()
	bin := testbinary.Cardsync(t) // as released: static, stamped
	const version = testbinary.Version
	host := platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}
	var archives [2]string
	for i := range archives {
		archives[i] = filepath.Join(dir, "image"+string(rune('a'+i))+".tar")
		err := run(t.Context(), []string{"oci", "-o", archives[i], "-mtime", "1790000000", "-version", version,
			"-revision", testbinary.Revision, "-source", "https://example.org/cardsync",
			"-cacerts", bin, // any file: its bytes are copied as they are
			"-license", filepath.Join("..", "..", "LICENSE"), "-modcache", modCache(t),
			host.OS + "/" + host.Architecture + "=" + bin}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
	}
	a, _ := os.ReadFile(archives[0])
	b, _ := os.ReadFile(archives[1])
	if !bytes.Equal(a, b) {
		t.Fatal("two image archives of the same inputs differ")
	}

	img, err := readOCI(archives[0], host.OS, host.Architecture)
	if err != nil {
		t.Fatal(err)
	}
	c := img.Config.Config
	if img.Config.OS != host.OS || img.Config.Architecture != host.Architecture {
		t.Errorf("config platform %s/%s, want %s/%s", img.Config.OS, img.Config.Architecture, host.OS, host.Architecture)
	}
	if got := c.Labels["org.opencontainers.image.created"]; got != "2026-09-21T14:13:20Z" {
		t.Errorf("created label %q, want the source date", got)
	}
	if got := c.Labels["org.opencontainers.image.source"]; got != "https://example.org/cardsync" {
		t.Errorf("source label %q", got)
	}
	if strings.Join(c.Cmd, " ") != "serve" || !slices.Contains(c.Env, "CARDSYNC_CONFIG=/etc/cardsync/config.toml") {
		t.Errorf("cmd %q env %q", c.Cmd, c.Env)
	}

	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	printed, err := checkOCI(t.Context(), archives[0], version, []platform{host}, host.OS, host.Architecture, work)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(printed, "cardsync "+version+"\ncommit: "+testbinary.Revision+"\n") {
		t.Errorf("the image's cardsync version printed %q", printed)
	}
	if _, err := os.Stat(filepath.Join(work, "rootfs", "etc", "ssl", "certs", "ca-certificates.crt")); err != nil {
		t.Errorf("no CA bundle in the image: %v", err)
	}
	// The linked modules' licenses: modernc.org/sqlite is one of them.
	notice, err := os.ReadFile(filepath.Join(work, "rootfs", "usr", "share", "doc", "cardsync", "THIRD_PARTY_LICENSES"))
	if err != nil || !bytes.Contains(notice, []byte("\nmodernc.org/sqlite v")) {
		t.Errorf("THIRD_PARTY_LICENSES in the image lacks modernc.org/sqlite (%v):\n%.400s", err, notice)
	}
	// A check for another version, or for both release platforms, fails.
	if _, err := checkOCI(t.Context(), archives[0], "v9", []platform{host}, host.OS, host.Architecture, t.TempDir()); err == nil {
		t.Error("checkOCI accepted a wrong version")
	}
	if _, err := checkOCI(t.Context(), archives[0], version, releasePlatforms(), host.OS, host.Architecture, t.TempDir()); err == nil {
		t.Error("checkOCI accepted an image archive without both release platforms")
	}
}

// tamper copies the image archive file to out with the blob named by
// target replaced by edit's result, and every descriptor that named it
// (and so on up to index.json) made to name the new blob: digests and sizes
// all agree, only the content is wrong.
func tamper(t *testing.T, file, out, target string, edit func([]byte) []byte) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	members := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if members[h.Name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	var replace func(name string, b []byte)
	replace = func(name string, b []byte) {
		old := members[name]
		delete(members, name)
		if name == "index.json" {
			members[name] = b
			return
		}
		newDigest := digest(b)
		members["blobs/sha256/"+strings.TrimPrefix(newDigest, "sha256:")] = b
		from := []byte(fmt.Sprintf(`"digest":"sha256:%s","size":%d`, strings.TrimPrefix(name, "blobs/sha256/"), len(old)))
		to := []byte(fmt.Sprintf(`"digest":%q,"size":%d`, newDigest, len(b)))
		for _, n := range slices.Sorted(maps.Keys(members)) {
			if m, ok := members[n]; ok && bytes.Contains(m, from) {
				replace(n, bytes.ReplaceAll(m, from, to))
			}
		}
	}
	name := "blobs/sha256/" + strings.TrimPrefix(target, "sha256:")
	b, ok := members[name]
	if !ok {
		t.Fatalf("no blob %s in %s", target, file)
	}
	replace(name, edit(b))
	var entries []entry
	for n, b := range members {
		entries = append(entries, entry{Name: n, Mode: 0o644, Data: b})
	}
	var buf bytes.Buffer
	if err := writeTar(&buf, entries, time.Unix(1_790_000_000, 0)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadOCIChecksEveryPlatform writes a two-platform archive and tampers
// with the image of one platform at a time: readOCI must refuse the archive
// whichever platform it is asked for.
func TestReadOCIChecksEveryPlatform(t *testing.T) {
	dir := t.TempDir()
	// Not run here: any Go binary will do (its build info names the
	// modules whose licenses the image carries); see smallBinary.
	bin := smallBinary(t)
	file := filepath.Join(dir, "image.tar")
	err := run(t.Context(), []string{"oci", "-o", file, "-mtime", "1790000000", "-version", "v1.2.3",
		"-revision", testbinary.Revision, "-source", "https://example.org/cardsync",
		"-license", filepath.Join("..", "..", "LICENSE"), "-modcache", modCache(t),
		"linux/amd64=" + bin, "linux/arm64=" + bin}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	imgs := map[string]ociImage{}
	for _, arch := range []string{"amd64", "arm64"} {
		if imgs[arch], err = readOCI(file, "linux", arch); err != nil {
			t.Fatalf("the untouched archive: %v", err)
		}
	}
	if got := imgs["amd64"].Platforms; !slices.Equal(got, releasePlatforms()) {
		t.Errorf("platforms %v, want %v", got, releasePlatforms())
	}

	otherLayer, err := gzipBytes([]byte("not the layer the config names"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, target string
		edit         func([]byte) []byte
		want         string
	}{
		{"arm64 config names another architecture", imgs["arm64"].Manifest.Config.Digest, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"architecture":"arm64"`), []byte(`"architecture":"s390x"`), 1)
		}, "image linux/arm64: config says linux/s390x"},
		{"arm64 config names another layer", imgs["arm64"].Manifest.Config.Digest, func(b []byte) []byte {
			return bytes.Replace(b, []byte(imgs["arm64"].Config.RootFS.DiffIDs[0]), []byte(digest([]byte("other"))), 1)
		}, "image linux/arm64: config rootfs"},
		{"amd64 layer swapped", imgs["amd64"].Manifest.Layers[0].Digest, func([]byte) []byte { return otherLayer },
			"image linux/amd64: config rootfs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "tampered.tar")
			tamper(t, file, out, tc.target, tc.edit)
			for _, arch := range []string{"amd64", "arm64"} {
				if _, err := readOCI(out, "linux", arch); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("readOCI for linux/%s: %v, want an error with %q", arch, err, tc.want)
				}
			}
		})
	}
}

// modCache is the Go module cache (go env GOMODCACHE).
// smallBinary returns a small Go binary of the toolchain (gofmt, about
// 3 MB), for the tests that build an image archive without running it: the
// test binary itself would do, but gzip of its tens of megabytes, twice
// per archive, cost a minute under the race detector.
func smallBinary(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	bin := filepath.Join(strings.TrimSpace(string(out)), "bin", "gofmt")
	if _, err := os.Stat(bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

func modCache(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestThirdPartyLicenses writes the notice of a cardsync binary: every
// module it links is named with its version and followed by its license,
// and a module missing from the cache is an error, not a silent gap.
func TestThirdPartyLicenses(t *testing.T) {
	bin := testbinary.Cardsync(t)
	b, err := thirdPartyLicenses(bin, modCache(t))
	if err != nil {
		t.Fatal(err)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Deps) < 5 {
		t.Fatalf("cardsync links only %d modules?", len(info.Deps))
	}
	for _, d := range info.Deps {
		head := "\n" + d.Path + " " + d.Version + "\n"
		i := bytes.Index(b, []byte(head))
		if i < 0 {
			t.Errorf("no section for %s %s", d.Path, d.Version)
			continue
		}
		if !bytes.Contains(b[i:min(len(b), i+len(head)+200)], []byte("\n-- ")) {
			t.Errorf("%s: no license file follows its name", d.Path)
		}
	}
	if _, err := thirdPartyLicenses(bin, t.TempDir()); err == nil || !strings.Contains(err.Error(), "not in the module cache") {
		t.Errorf("an empty module cache gave %v, want an error", err)
	}
}
