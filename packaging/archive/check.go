package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// ociImage is one platform's image as read back from an archive.
type ociImage struct {
	Platforms []platform // every platform the archive's index lists
	Manifest  manifest
	Config    imageConfig
	Layer     []byte // the one layer, gzipped
}

// readOCI reads the archive at file the way a runtime would: index.json,
// through nested indexes, to every platform's manifest, its config and its
// layer, checking every blob against its digest (see readImage), and
// returns the image for goos/goarch.
func readOCI(file, goos, goarch string) (ociImage, error) {
	f, err := os.Open(file)
	if err != nil {
		return ociImage{}, fmt.Errorf("read image archive: %w", err)
	}
	defer f.Close()
	members := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return ociImage{}, fmt.Errorf("read %s: %w", file, err)
		}
		if h.Typeflag == tar.TypeReg {
			if members[h.Name], err = io.ReadAll(tr); err != nil {
				return ociImage{}, fmt.Errorf("read %s: %w", file, err)
			}
		}
	}
	var layout struct {
		ImageLayoutVersion string `json:"imageLayoutVersion"`
	}
	if err := json.Unmarshal(members["oci-layout"], &layout); err != nil || layout.ImageLayoutVersion != "1.0.0" {
		return ociImage{}, fmt.Errorf("%s: no oci-layout 1.0.0 (%v)", file, err)
	}
	blob := func(d descriptor, v any) ([]byte, error) {
		b, ok := members["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
		if !ok || !strings.HasPrefix(d.Digest, "sha256:") {
			return nil, fmt.Errorf("%s: blob %s missing", file, d.Digest)
		}
		if digest(b) != d.Digest || int64(len(b)) != d.Size {
			return nil, fmt.Errorf("%s: blob %s does not match its digest or size", file, d.Digest)
		}
		if v != nil {
			if err := json.Unmarshal(b, v); err != nil {
				return nil, fmt.Errorf("%s: blob %s: %w", file, d.Digest, err)
			}
		}
		return b, nil
	}
	var idx index
	if err := json.Unmarshal(members["index.json"], &idx); err != nil {
		return ociImage{}, fmt.Errorf("%s: index.json: %w", file, err)
	}
	var img ociImage
	var manifests []descriptor
	for depth := 0; ; depth++ {
		var next *descriptor
		for _, d := range idx.Manifests {
			switch d.MediaType {
			case mediaIndex:
				next = &d
			case mediaManifest:
				if d.Platform == nil {
					return ociImage{}, fmt.Errorf("%s: manifest %s has no platform", file, d.Digest)
				}
				img.Platforms = append(img.Platforms, *d.Platform)
				manifests = append(manifests, d)
			}
		}
		if next == nil || depth > 2 {
			break
		}
		idx = index{}
		if _, err := blob(*next, &idx); err != nil {
			return ociImage{}, err
		}
	}
	// Every platform's image, not only this machine's: its config must name
	// the platform the index lists it under, and its rootfs must be its layer.
	found := false
	for _, d := range manifests {
		one, err := readImage(d, blob)
		if err != nil {
			return ociImage{}, fmt.Errorf("%s: image %s/%s: %w", file, d.Platform.OS, d.Platform.Architecture, err)
		}
		if d.Platform.OS == goos && d.Platform.Architecture == goarch {
			img.Manifest, img.Config, img.Layer = one.Manifest, one.Config, one.Layer
			found = true
		}
	}
	if !found {
		return ociImage{}, fmt.Errorf("%s: no image for %s/%s (platforms %v)", file, goos, goarch, img.Platforms)
	}
	return img, nil
}

// readImage reads the manifest d names, its config and its one layer
// through blob, and checks that the config's os and architecture are d's
// platform and that its rootfs.diff_ids name the uncompressed layer.
func readImage(d descriptor, blob func(descriptor, any) ([]byte, error)) (ociImage, error) {
	var img ociImage
	if _, err := blob(d, &img.Manifest); err != nil {
		return ociImage{}, err
	}
	if _, err := blob(img.Manifest.Config, &img.Config); err != nil {
		return ociImage{}, err
	}
	if img.Config.OS != d.Platform.OS || img.Config.Architecture != d.Platform.Architecture {
		return ociImage{}, fmt.Errorf("config says %s/%s, the index %s/%s", img.Config.OS, img.Config.Architecture, d.Platform.OS, d.Platform.Architecture)
	}
	if len(img.Manifest.Layers) != 1 || img.Manifest.Layers[0].MediaType != mediaLayer {
		return ociImage{}, fmt.Errorf("want one gzip layer, got %+v", img.Manifest.Layers)
	}
	var err error
	if img.Layer, err = blob(img.Manifest.Layers[0], nil); err != nil {
		return ociImage{}, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(img.Layer))
	if err != nil {
		return ociImage{}, fmt.Errorf("layer: %w", err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, zr); err != nil {
		return ociImage{}, fmt.Errorf("layer: %w", err)
	}
	diffID := "sha256:" + hex.EncodeToString(h.Sum(nil))
	if ids := img.Config.RootFS.DiffIDs; img.Config.RootFS.Type != "layers" || len(ids) != 1 || ids[0] != diffID {
		return ociImage{}, fmt.Errorf("config rootfs %s %v, want layers [%s] (the uncompressed layer)", img.Config.RootFS.Type, ids, diffID)
	}
	return img, nil
}

// checkConfig compares what the image says of itself with what cardsync's
// image must say.
func checkConfig(img ociImage, version string) error {
	c := img.Config.Config
	var problems []string
	want := func(what string, ok bool, got any) {
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: got %v", what, got))
		}
	}
	want("user", c.User == fmt.Sprintf("%d:%d", imageUID, imageUID), c.User)
	want("entrypoint", slices.Equal(c.Entrypoint, []string{"/" + binaryPath}), c.Entrypoint)
	_, vol := c.Volumes["/"+stateDir]
	want("volume /"+stateDir, vol, c.Volumes)
	want("working dir", c.WorkingDir == "/"+stateDir, c.WorkingDir)
	want("env CARDSYNC_CONFIG", slices.Contains(c.Env, "CARDSYNC_CONFIG=/etc/cardsync/config.toml"), c.Env)
	_, port := c.ExposedPorts[metricsPort]
	want("exposed port "+metricsPort, port && len(c.ExposedPorts) == 1, c.ExposedPorts)
	want("cmd", slices.Equal(c.Cmd, []string{"serve"}), c.Cmd)
	for _, k := range []string{"version", "revision", "source", "licenses", "created", "title"} {
		v := c.Labels["org.opencontainers.image."+k]
		want("label "+k, v != "" && img.Manifest.Annotations["org.opencontainers.image."+k] == v, v)
	}
	if version != "" {
		want("version label", c.Labels["org.opencontainers.image.version"] == version, c.Labels["org.opencontainers.image.version"])
	}
	if len(problems) > 0 {
		return fmt.Errorf("image config: %s", strings.Join(problems, "; "))
	}
	return nil
}

// unpack extracts a gzipped layer into dir, refusing any member whose
// name is absolute or climbs out with .., and any member that is neither a
// directory nor a regular file. It returns the members' headers by clean
// name (owners and modes as the image has them).
func unpack(layer []byte, dir string) (map[string]*tar.Header, error) {
	zr, err := gzip.NewReader(bytes.NewReader(layer))
	if err != nil {
		return nil, fmt.Errorf("unpack layer: %w", err)
	}
	headers := map[string]*tar.Header{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return headers, nil
		}
		if err != nil {
			return nil, fmt.Errorf("unpack layer: %w", err)
		}
		name := path.Clean(h.Name)
		if path.IsAbs(h.Name) || name == ".." || strings.HasPrefix(name, "../") {
			return nil, fmt.Errorf("unpack layer: refusing member %q outside the root", h.Name)
		}
		headers[name] = h
		target := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return nil, fmt.Errorf("unpack layer: %w", err)
			}
			// The owner's bits only: the test does not run as the image's user.
			if err := os.Chmod(target, os.FileMode(h.Mode&0o777)|0o700); err != nil {
				return nil, fmt.Errorf("unpack layer: %w", err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return nil, fmt.Errorf("unpack layer: %w", err)
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, os.FileMode(h.Mode&0o777))
			if err != nil {
				return nil, fmt.Errorf("unpack layer: %w", err)
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, fmt.Errorf("unpack layer %s: %w", h.Name, err)
			}
		default:
			return nil, fmt.Errorf("unpack layer: refusing member %q of type %q", h.Name, h.Typeflag)
		}
	}
}

// checkRootfs checks the layer's members (unpack's headers): the static
// entrypoint, the image's user, its state directory and /tmp.
func checkRootfs(headers map[string]*tar.Header) error {
	var problems []string
	for name, want := range map[string]struct {
		mode     int64
		uid, gid int
	}{
		binaryPath: {0o755, 0, 0}, "etc/passwd": {0o644, 0, 0}, "etc/group": {0o644, 0, 0},
		stateDir: {0o750, imageUID, imageUID}, "tmp": {0o1777, 0, 0},
		"usr/share/doc/cardsync/LICENSE": {0o644, 0, 0}, "usr/share/doc/cardsync/THIRD_PARTY_LICENSES": {0o644, 0, 0},
	} {
		h := headers[name]
		if h == nil {
			problems = append(problems, name+" missing")
		} else if h.Typeflag == tar.TypeReg && h.Size == 0 {
			problems = append(problems, name+" is empty")
		} else if h.Mode != want.mode || h.Uid != want.uid || h.Gid != want.gid {
			problems = append(problems, fmt.Sprintf("%s: mode %o owner %d:%d, want %o %d:%d", name, h.Mode, h.Uid, h.Gid, want.mode, want.uid, want.gid))
		}
	}
	slices.Sort(problems)
	if len(problems) > 0 {
		return fmt.Errorf("image rootfs: %s", strings.Join(problems, "; "))
	}
	return nil
}

// runImage runs the unpacked image's entrypoint as a runtime would start it
// (its user aside): version, which must print the image's version; demo,
// which must leave its warehouse; then status on that warehouse with
// [schedule] timezone = "Europe/Berlin", which must load the zone. As root
// it runs them chrooted into rootfs, which holds no zoneinfo and no
// /etc/localtime, so status proves that the binary carries its own zones.
// Otherwise it runs them from here (the host's zoneinfo may then answer),
// and refuses to when CARDSYNC_REQUIRE_TOOLS is set. work is a directory
// for the demo outside rootfs. It returns what version printed.
func runImage(ctx context.Context, img ociImage, rootfs, work string) (string, error) {
	c := img.Config.Config
	entry := c.Entrypoint[0]
	chroot := os.Geteuid() == 0
	if !chroot && os.Getenv("CARDSYNC_REQUIRE_TOOLS") != "" {
		return "", errors.New("running the image chrooted into its rootfs needs root (CARDSYNC_REQUIRE_TOOLS is set)")
	}
	// bin and dir as the commands see them, here the demo directory's path from this process.
	bin, dir, here := filepath.Join(rootfs, filepath.FromSlash(strings.TrimPrefix(entry, "/"))), work, work
	if chroot {
		bin, dir, here = entry, "/tmp/check-oci", filepath.Join(rootfs, "tmp", "check-oci")
		if err := os.Mkdir(here, 0o755); err != nil {
			return "", fmt.Errorf("run image: %w", err)
		}
	}
	// The environment a runtime gives: the image's Env, plus this process's
	// PATH and HOME, nothing else. Neither TZ nor ZONEINFO: the zones must
	// come from the binary or the image. No CARDSYNC_* variable of the
	// caller's (cardsync refuses one it does not know, such as CI's
	// CARDSYNC_REQUIRE_TOOLS).
	env := slices.Clone(c.Env)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "PATH" || k == "HOME" {
			env = append(env, kv)
		}
	}
	command := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir, cmd.Env = dir, env
		if chroot {
			cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs}
		}
		return cmd
	}
	out, err := command("version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s version: %w\n%s", bin, err, out)
	}
	if first, _, _ := strings.Cut(string(out), "\n"); first != "cardsync "+c.Labels["org.opencontainers.image.version"] {
		return "", fmt.Errorf("%s version printed %q, want cardsync %s", bin, first, c.Labels["org.opencontainers.image.version"])
	}
	db := path.Join(dir, "cardsync-demo.db")
	if dout, err := command("demo", "-db", db).CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s demo: %w\n%s", bin, err, dout)
	}
	if _, err := os.Stat(filepath.Join(here, "cardsync-demo.db")); err != nil {
		return "", fmt.Errorf("demo left no warehouse: %w", err)
	}
	conf := fmt.Sprintf("[warehouse]\npath = %q\n\n[schedule]\ntimezone = \"Europe/Berlin\"\n", db)
	if err := os.WriteFile(filepath.Join(here, "zone.toml"), []byte(conf), 0o644); err != nil {
		return "", fmt.Errorf("run image: %w", err)
	}
	// status: 0 healthy, 1 unhealthy (both show the schedule), 2 a bad config.
	sout, err := command("status", "-config", path.Join(dir, "zone.toml")).CombinedOutput()
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) || !strings.Contains(string(sout), " in Europe/Berlin") {
		return "", fmt.Errorf("%s status with [schedule] timezone = \"Europe/Berlin\" (chroot %v): %v\n%s", bin, chroot, err, sout)
	}
	return string(out), nil
}
