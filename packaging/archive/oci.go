package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// The media types of the OCI image specification (v1.1).
const (
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// The image's user: not root, and an id no Debian or Alpine base assigns
// (system users stay below 1000, the first regular user is 1000), so a
// bind-mounted state directory is chown'ed to it on purpose, never by
// chance.
const (
	imageUID   = 10001
	imageUser  = "cardsync"
	stateDir   = "var/lib/cardsync"
	binaryPath = "usr/bin/cardsync"
	// metricsPort is the port of serve's /metrics and /healthz in every
	// doc and example ([metrics] listen = "127.0.0.1:9464"). serve listens
	// on nothing by default: in the image, the mounted config sets
	// listen = "0.0.0.0:9464" to reach it through the published port.
	metricsPort = "9464/tcp"
)

// imageSpec is what one image archive holds.
type imageSpec struct {
	Version  string // release version: labels and the reference name (refName)
	Revision string // commit hash
	Source   string // repository URL
	Created  time.Time
	// CACerts is the CA bundle put at /etc/ssl/certs/ca-certificates.crt
	// (nil: none; the binary then trusts nothing for https).
	CACerts []byte
	// License is cardsync's LICENSE, put at /usr/share/doc/cardsync/LICENSE
	// beside THIRD_PARTY_LICENSES (each platform's linked modules, read from
	// the module cache at ModCache).
	License  []byte
	ModCache string
	// Platforms are the images, one per platform, in the index's order.
	Platforms []platformBinary
}

// platformBinary is a static cardsync built for OS/Arch.
type platformBinary struct {
	OS, Arch string
	Binary   string // path of the built executable
}

// descriptor is an OCI content descriptor.
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type index struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Manifests     []descriptor      `json:"manifests"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

type manifest struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Config        descriptor        `json:"config"`
	Layers        []descriptor      `json:"layers"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

type imageConfig struct {
	Created      string        `json:"created"`
	Architecture string        `json:"architecture"`
	OS           string        `json:"os"`
	Config       runtimeConfig `json:"config"`
	RootFS       struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
	History []struct {
		Created   string `json:"created"`
		CreatedBy string `json:"created_by"`
	} `json:"history"`
}

// runtimeConfig is the image config's "config" object. docs/operating.md
// shows every field of it as the image has it (TestImageConfigIsDocumented).
type runtimeConfig struct {
	User         string              `json:"User"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts"`
	Entrypoint   []string            `json:"Entrypoint"`
	Env          []string            `json:"Env"`
	Cmd          []string            `json:"Cmd"`
	WorkingDir   string              `json:"WorkingDir"`
	Volumes      map[string]struct{} `json:"Volumes"`
	Labels       map[string]string   `json:"Labels"`
}

// blobs is the content of blobs/sha256/, by digest.
type blobs map[string][]byte

// add stores b and returns its descriptor.
func (bs blobs) add(mediaType string, b []byte) descriptor {
	d := digest(b)
	bs[d] = b
	return descriptor{MediaType: mediaType, Digest: d, Size: int64(len(b))}
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// labels are the image's OCI annotations, also its config's labels.
func (s imageSpec) labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":    "cardsync",
		"org.opencontainers.image.version":  s.Version,
		"org.opencontainers.image.revision": s.Revision,
		"org.opencontainers.image.source":   s.Source,
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.created":  s.Created.UTC().Format(time.RFC3339),
	}
}

// refName is the image's name in the archive's index.json: cardsync:VERSION.
// podman load names the image after it (localhost/cardsync:VERSION), and
// oci-archive:FILE:cardsync:VERSION selects it. A bare VERSION would load as
// localhost/VERSION:latest.
func (s imageSpec) refName() string {
	return imageUser + ":" + s.Version
}

// rootfs lists the image's one layer: the binary, the user in passwd and
// group, the CA bundle, the licenses, the state directory the user owns,
// and /tmp.
func (s imageSpec) rootfs(bin entry, thirdParty []byte) []entry {
	bin.Mode = 0o755
	id := fmt.Sprint(imageUID)
	es := []entry{
		bin,
		{Name: "etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/sbin/nologin\n" +
			imageUser + ":x:" + id + ":" + id + ":cardsync:/" + stateDir + ":/sbin/nologin\n")},
		{Name: "etc/group", Mode: 0o644, Data: []byte("root:x:0:\n" + imageUser + ":x:" + id + ":\n")},
		{Name: "etc/cardsync", Dir: true, Mode: 0o755},
		{Name: stateDir, Dir: true, Mode: 0o750, UID: imageUID, GID: imageUID},
		{Name: "tmp", Dir: true, Mode: 0o1777},
		{Name: "usr/share/doc/cardsync/LICENSE", Mode: 0o644, Data: s.License},
		{Name: "usr/share/doc/cardsync/THIRD_PARTY_LICENSES", Mode: 0o644, Data: thirdParty},
	}
	if s.CACerts != nil {
		es = append(es, entry{Name: "etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Data: s.CACerts})
	}
	return es
}

// writeOCI writes the images of s as an OCI image layout in a tar stream,
// as `oci-archive:` transports read it: oci-layout, index.json naming one
// image index (annotated with its reference name, see refName) whose
// manifests are one per platform, and blobs/sha256/. Every time in it is
// s.Created, so the same inputs give the same bytes.
func writeOCI(w io.Writer, s imageSpec) error {
	bs := blobs{}
	labels := s.labels()
	created := labels["org.opencontainers.image.created"]
	var manifests []descriptor
	for _, p := range s.Platforms {
		bin, err := fileEntry(binaryPath, p.Binary)
		if err != nil {
			return fmt.Errorf("image %s/%s: %w", p.OS, p.Arch, err)
		}
		thirdParty, err := thirdPartyLicenses(p.Binary, s.ModCache)
		if err != nil {
			return fmt.Errorf("image %s/%s: %w", p.OS, p.Arch, err)
		}
		var layer bytes.Buffer
		if err := writeTar(&layer, s.rootfs(bin, thirdParty), s.Created); err != nil {
			return fmt.Errorf("image %s/%s layer: %w", p.OS, p.Arch, err)
		}
		gz, err := gzipBytes(layer.Bytes())
		if err != nil {
			return fmt.Errorf("image %s/%s layer: %w", p.OS, p.Arch, err)
		}
		cfg := imageConfig{Created: created, Architecture: p.Arch, OS: p.OS, Config: runtimeConfig{
			User:         fmt.Sprintf("%d:%d", imageUID, imageUID),
			ExposedPorts: map[string]struct{}{metricsPort: {}},
			Entrypoint:   []string{"/" + binaryPath},
			// Every command finds the mounted config without -config
			// (podman run IMAGE status), and the default command is serve.
			Env:        []string{"CARDSYNC_CONFIG=/etc/cardsync/config.toml"},
			Cmd:        []string{"serve"},
			WorkingDir: "/" + stateDir,
			Volumes:    map[string]struct{}{"/" + stateDir: {}},
			Labels:     labels,
		}}
		cfg.RootFS.Type = "layers"
		cfg.RootFS.DiffIDs = []string{digest(layer.Bytes())}
		cfg.History = append(cfg.History, struct {
			Created   string `json:"created"`
			CreatedBy string `json:"created_by"`
		}{created, "cardsync packaging/archive oci"})
		cfgJSON, err := json.Marshal(cfg)
		if err != nil {
			return fmt.Errorf("image %s/%s config: %w", p.OS, p.Arch, err)
		}
		m := manifest{SchemaVersion: 2, MediaType: mediaManifest, Config: bs.add(mediaConfig, cfgJSON),
			Layers: []descriptor{bs.add(mediaLayer, gz)}, Annotations: labels}
		mJSON, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("image %s/%s manifest: %w", p.OS, p.Arch, err)
		}
		d := bs.add(mediaManifest, mJSON)
		d.Platform = &platform{Architecture: p.Arch, OS: p.OS}
		manifests = append(manifests, d)
	}
	idxJSON, err := json.Marshal(index{SchemaVersion: 2, MediaType: mediaIndex, Manifests: manifests, Annotations: labels})
	if err != nil {
		return fmt.Errorf("image index: %w", err)
	}
	top := bs.add(mediaIndex, idxJSON)
	top.Annotations = map[string]string{"org.opencontainers.image.ref.name": s.refName()}
	topJSON, err := json.Marshal(index{SchemaVersion: 2, MediaType: mediaIndex, Manifests: []descriptor{top}})
	if err != nil {
		return fmt.Errorf("index.json: %w", err)
	}
	entries := []entry{
		{Name: "oci-layout", Mode: 0o644, Data: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{Name: "index.json", Mode: 0o644, Data: topJSON},
	}
	for d, b := range bs {
		entries = append(entries, entry{Name: "blobs/sha256/" + d[len("sha256:"):], Mode: 0o644, Data: b})
	}
	return writeTar(w, entries, s.Created)
}
