package main

import (
	"cmp"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/cardsync/cardsync/metrics"
)

// The release build stamps these (packaging/dist.sh):
//
//	go build -ldflags "-X main.version=V -X main.revision=R -X main.buildDate=D"
//
// V is `git describe --tags --always --dirty`, R the full commit hash and D
// the commit time (RFC 3339, UTC), not the time of the build, so two builds
// of one commit are identical. They are the only package-level variables
// the program has: the linker writes them, nothing changes them.
var (
	version   string
	revision  string
	buildDate string
)

// unknown is a build fact nobody recorded: an unstamped build outside a
// git checkout (or with -buildvcs=false).
const unknown = "unknown"

// buildFacts says which build this binary is.
type buildFacts struct {
	Version   string // release tag or commit; "dev" when nothing says
	Revision  string // full commit hash, or unknown
	Date      string // commit time, RFC 3339 UTC, or unknown
	GoVersion string // the Go release that compiled it
}

// thisBuild returns the stamped facts, each missing one taken from the
// module build info (the VCS settings go build records in a checkout).
func thisBuild() buildFacts {
	bi, _ := debug.ReadBuildInfo()
	return resolveBuild(version, revision, buildDate, bi)
}

// resolveBuild combines the stamped values with bi (nil: none): a stamp
// wins; else a module version (go install module@vX.Y.Z); else the VCS
// revision, shortened to 12 digits, with -dirty for uncommitted changes;
// else "dev".
func resolveBuild(stampVersion, stampRevision, stampDate string, bi *debug.BuildInfo) buildFacts {
	b := buildFacts{Version: stampVersion, Revision: stampRevision, Date: stampDate, GoVersion: runtime.Version()}
	var vcsRevision, vcsTime string
	var modified bool
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				vcsRevision = s.Value
			case "vcs.time":
				vcsTime = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if bi.GoVersion != "" {
			b.GoVersion = bi.GoVersion
		}
	}
	if b.Revision == "" {
		b.Revision = cmp.Or(vcsRevision, unknown)
	}
	if b.Date == "" {
		b.Date = cmp.Or(vcsTime, unknown)
	}
	if b.Version == "" {
		switch {
		case bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)":
			b.Version = bi.Main.Version
		case vcsRevision != "":
			b.Version = vcsRevision[:min(12, len(vcsRevision))]
			if modified {
				b.Version += "-dirty"
			}
		default:
			b.Version = "dev"
		}
	}
	return b
}

// metrics returns the facts cardsync_build_info carries.
func (b buildFacts) metrics() metrics.BuildInfo {
	return metrics.BuildInfo{Version: b.Version, Revision: b.Revision, GoVersion: b.GoVersion}
}

// print writes what `cardsync version` prints: the first line is the
// one scripts read ("cardsync VERSION"), then one fact per line.
func (b buildFacts) print(w io.Writer) {
	fmt.Fprintf(w, "cardsync %s\ncommit: %s\nbuilt: %s\ngo: %s\n", b.Version, b.Revision, b.Date, b.GoVersion)
}
