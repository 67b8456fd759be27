package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
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
)

// ociImage is one platform's image as read back from an archive.
type ociImage struct {
	Platforms []platform // every platform the archive's index lists
	Manifest  manifest
	Config    imageConfig
	Layer     []byte // the one layer, gzipped
}

// readOCI reads the archive at file the way a runtime would: index.json,
// through nested indexes, to the manifest for os/arch, its config and its
// layer, checking every blob against its digest.
func readOCI(file, goos, goarch string) (ociImage, error) {
	f, err := os.Open(file)
	if err != nil {
		return ociImage{}, err
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
	var found *descriptor
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
				if d.Platform.OS == goos && d.Platform.Architecture == goarch {
					found = &d
				}
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
	if found == nil {
		return ociImage{}, fmt.Errorf("%s: no image for %s/%s (platforms %v)", file, goos, goarch, img.Platforms)
	}
	if _, err := blob(*found, &img.Manifest); err != nil {
		return ociImage{}, err
	}
	if _, err := blob(img.Manifest.Config, &img.Config); err != nil {
		return ociImage{}, err
	}
	if len(img.Manifest.Layers) != 1 || img.Manifest.Layers[0].MediaType != mediaLayer {
		return ociImage{}, fmt.Errorf("%s: want one gzip layer, got %+v", file, img.Manifest.Layers)
	}
	if img.Layer, err = blob(img.Manifest.Layers[0], nil); err != nil {
		return ociImage{}, err
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
				return nil, err
			}
			// The owner's bits only: the test does not run as the image's user.
			if err := os.Chmod(target, os.FileMode(h.Mode&0o777)|0o700); err != nil {
				return nil, err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return nil, err
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
	} {
		h := headers[name]
		if h == nil {
			problems = append(problems, name+" missing")
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

// runImage runs the unpacked image's entrypoint from rootfs as a runtime
// would start it (its working directory aside): version, which must print
// the image's version, then demo into work, which must leave the demo
// warehouse there. It returns what version printed.
func runImage(ctx context.Context, img ociImage, rootfs, work string) (string, error) {
	c := img.Config.Config
	bin := filepath.Join(rootfs, filepath.FromSlash(strings.TrimPrefix(c.Entrypoint[0], "/")))
	out, err := exec.CommandContext(ctx, bin, "version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s version: %w\n%s", bin, err, out)
	}
	if first, _, _ := strings.Cut(string(out), "\n"); first != "cardsync "+c.Labels["org.opencontainers.image.version"] {
		return "", fmt.Errorf("%s version printed %q, want cardsync %s", bin, first, c.Labels["org.opencontainers.image.version"])
	}
	db := filepath.Join(work, "cardsync-demo.db")
	demo := exec.CommandContext(ctx, bin, "demo", "-db", db)
	demo.Dir = work
	if dout, err := demo.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s demo: %w\n%s", bin, err, dout)
	}
	if _, err := os.Stat(db); err != nil {
		return "", fmt.Errorf("demo left no warehouse: %w", err)
	}
	return string(out), nil
}
