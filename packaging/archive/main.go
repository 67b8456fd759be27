// Command archive writes cardsync's release archives so that the same
// inputs always give the same bytes, and checks the image archive the way a
// runtime reads it. packaging/dist.sh (make dist) and packaging/check.sh run it.
//
//	archive tar -o OUT.tar.gz -mtime EPOCH -prefix DIR NAME=SRC...
//	archive oci -o OUT.tar -mtime EPOCH -version V -revision R -source URL [-cacerts FILE] OS/ARCH=BINARY...
//	archive sums DIR
//	archive check-oci [-version V] FILE
//	archive licenses -o OUT -modcache DIR BINARY
//
// tar stores each SRC as DIR/NAME (0755 if SRC is executable, else 0644,
// owned by root, every time EPOCH). oci writes an OCI image layout archive
// with one image per OS/ARCH. sums writes DIR/SHA256SUMS over every other
// file in DIR. check-oci reads every platform's image in FILE (config and
// layer must match the index), checks the config and rootfs of this
// machine's, unpacks it and runs its entrypoint: version, demo, and status
// with a config in the Europe/Berlin zone (as root in a chroot of the
// rootfs, so the zone must come from the binary). licenses writes the
// license texts of every module linked into BINARY, read from the module
// cache DIR (THIRD_PARTY_LICENSES in every artefact).
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "archive:", err)
		os.Exit(1)
	}
}

const usage = "usage: archive tar|oci|sums|check-oci|licenses ... (see packaging/archive/main.go)"

// run runs one subcommand.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	out := fs.String("o", "", "output file")
	epoch := fs.Int64("mtime", -1, "time of every entry, unix seconds (SOURCE_DATE_EPOCH)")
	prefix := fs.String("prefix", "", "top directory of the tarball")
	version := fs.String("version", "", "release version")
	revision := fs.String("revision", "", "commit hash")
	source := fs.String("source", "", "source repository URL")
	cacerts := fs.String("cacerts", "", "CA bundle for the image (empty: none)")
	license := fs.String("license", "", "cardsync's LICENSE, put in the image")
	modCache := fs.String("modcache", "", "the Go module cache (go env GOMODCACHE): where the linked modules' licenses are read")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	mtime := time.Unix(*epoch, 0).UTC()
	needs := func(ok bool, what string) error {
		if !ok {
			return fmt.Errorf("%s: %s required", args[0], what)
		}
		return nil
	}
	switch args[0] {
	case "tar":
		if err := errors.Join(needs(*out != "", "-o"), needs(*epoch >= 0, "-mtime"), needs(*prefix != "", "-prefix"), needs(fs.NArg() > 0, "NAME=SRC")); err != nil {
			return err
		}
		return tarCommand(fs.Args(), *prefix, *out, mtime)
	case "oci":
		if err := errors.Join(needs(*out != "", "-o"), needs(*epoch >= 0, "-mtime"), needs(*version != "", "-version"),
			needs(*revision != "", "-revision"), needs(*source != "", "-source"), needs(*license != "", "-license"),
			needs(*modCache != "", "-modcache"), needs(fs.NArg() > 0, "OS/ARCH=BINARY")); err != nil {
			return err
		}
		spec := imageSpec{Version: *version, Revision: *revision, Source: *source, Created: mtime, ModCache: *modCache}
		return ociCommand(fs.Args(), *out, *license, *cacerts, spec)
	case "sums":
		if fs.NArg() != 1 {
			return errors.New("sums: want one DIR")
		}
		b, err := sums(fs.Arg(0))
		if err != nil {
			return fmt.Errorf("sums: %w", err)
		}
		if err := writeFileAtomic(filepath.Join(fs.Arg(0), "SHA256SUMS"), b); err != nil {
			return fmt.Errorf("sums: %w", err)
		}
		return nil
	case "licenses":
		if err := errors.Join(needs(*out != "", "-o"), needs(*modCache != "", "-modcache"), needs(fs.NArg() == 1, "one BINARY")); err != nil {
			return err
		}
		b, err := thirdPartyLicenses(fs.Arg(0), *modCache)
		if err != nil {
			return fmt.Errorf("licenses: %w", err)
		}
		if err := writeFileAtomic(*out, b); err != nil {
			return fmt.Errorf("licenses: %w", err)
		}
		return nil
	case "check-oci":
		if fs.NArg() != 1 {
			return errors.New("check-oci: want one FILE")
		}
		work, err := os.MkdirTemp("", "cardsync-check-oci-")
		if err != nil {
			return fmt.Errorf("check-oci: %w", err)
		}
		defer os.RemoveAll(work)
		printed, err := checkOCI(ctx, fs.Arg(0), *version, releasePlatforms(), runtime.GOOS, runtime.GOARCH, work)
		if err != nil {
			return err
		}
		where := "from this host (not root: the host's zoneinfo may have answered)"
		if os.Geteuid() == 0 {
			where = "chrooted into the image's rootfs"
		}
		fmt.Fprintf(stdout, "%s: every platform's config and layer match the index; the %s/%s image's entrypoint ran version, demo and status in Europe/Berlin %s:\n%s",
			fs.Arg(0), runtime.GOOS, runtime.GOARCH, where, printed)
		return nil
	}
	return errors.New(usage)
}

// tarCommand writes the tarball out of the NAME=SRC args, under prefix.
func tarCommand(args []string, prefix, out string, mtime time.Time) error {
	var entries []entry
	for _, a := range args {
		name, src, ok := strings.Cut(a, "=")
		if !ok {
			return fmt.Errorf("tar: %q is not NAME=SRC", a)
		}
		e, err := fileEntry(prefix+"/"+name, src)
		if err != nil {
			return fmt.Errorf("tar: %w", err)
		}
		entries = append(entries, e)
	}
	b, err := tarGz(entries, mtime)
	if err != nil {
		return fmt.Errorf("tar: %w", err)
	}
	if err := writeFileAtomic(out, b); err != nil {
		return fmt.Errorf("tar: %w", err)
	}
	return nil
}

// ociCommand writes the OCI image archive out of the OS/ARCH=BINARY args,
// with spec's metadata, the license file and the CA bundle (if any).
func ociCommand(args []string, out, license, cacerts string, spec imageSpec) error {
	lic, err := os.ReadFile(license)
	if err != nil {
		return fmt.Errorf("oci: license: %w", err)
	}
	spec.License = lic
	if cacerts != "" {
		b, err := os.ReadFile(cacerts)
		if err != nil {
			return fmt.Errorf("oci: CA bundle: %w", err)
		}
		spec.CACerts = b
	}
	for _, a := range args {
		plat, bin, ok := strings.Cut(a, "=")
		goos, goarch, ok2 := strings.Cut(plat, "/")
		if !ok || !ok2 {
			return fmt.Errorf("oci: %q is not OS/ARCH=BINARY", a)
		}
		spec.Platforms = append(spec.Platforms, platformBinary{OS: goos, Arch: goarch, Binary: bin})
	}
	f, err := os.Create(out + ".tmp")
	if err != nil {
		return fmt.Errorf("oci: %w", err)
	}
	defer os.Remove(f.Name())
	if err := writeOCI(f, spec); err != nil {
		f.Close()
		return fmt.Errorf("oci: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("oci: %w", err)
	}
	if err := os.Rename(f.Name(), out); err != nil {
		return fmt.Errorf("oci: %w", err)
	}
	return nil
}

// releasePlatforms returns the platforms a release's image archive holds,
// in its index's order.
func releasePlatforms() []platform {
	return []platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}
}

// checkOCI reads file's image for goos/goarch, checks that its index lists
// exactly platforms, its config (and its version label against version,
// if not empty) and its rootfs, unpacks it under work and runs it there.
func checkOCI(ctx context.Context, file, version string, platforms []platform, goos, goarch, work string) (string, error) {
	img, err := readOCI(file, goos, goarch)
	if err != nil {
		return "", err
	}
	if !slices.Equal(img.Platforms, platforms) {
		return "", fmt.Errorf("%s lists platforms %v, want %v", file, img.Platforms, platforms)
	}
	if err := checkConfig(img, version); err != nil {
		return "", err
	}
	rootfs := filepath.Join(work, "rootfs")
	headers, err := unpack(img.Layer, rootfs)
	if err != nil {
		return "", err
	}
	if err := checkRootfs(headers); err != nil {
		return "", err
	}
	passwd, err := os.ReadFile(filepath.Join(rootfs, "etc", "passwd"))
	if err != nil {
		return "", fmt.Errorf("image /etc/passwd: %w", err)
	}
	if !strings.Contains(string(passwd), fmt.Sprintf("\n%s:x:%d:%d:", imageUser, imageUID, imageUID)) {
		return "", fmt.Errorf("image /etc/passwd lacks user %s (%d)", imageUser, imageUID)
	}
	demo := filepath.Join(work, "demo")
	if err := os.Mkdir(demo, 0o755); err != nil {
		return "", fmt.Errorf("check image: %w", err)
	}
	return runImage(ctx, img, rootfs, demo)
}

// sums returns DIR's SHA256SUMS in sha256sum's format (two spaces, file
// name), sorted by name, over every regular file in dir but SHA256SUMS.
func sums(dir string) ([]byte, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, de := range des {
		if de.Type().IsRegular() && de.Name() != "SHA256SUMS" && !strings.HasSuffix(de.Name(), ".tmp") {
			names = append(names, de.Name())
		}
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		f, err := os.Open(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("sums %s: %w", n, err)
		}
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), n)
	}
	return []byte(b.String()), nil
}
