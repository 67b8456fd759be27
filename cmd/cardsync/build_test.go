package main

import (
	"os/exec"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/cardsync/cardsync/internal/testbinary"
)

func TestResolveBuild(t *testing.T) {
	vcs := func(modified string) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-11-20T09:14:03Z"},
			{Key: "vcs.modified", Value: modified},
		}}
	}
	tests := []struct {
		name                  string
		stampV, stampR, stamp string
		bi                    *debug.BuildInfo
		want                  buildFacts
	}{
		{"stamped", "v1.2.0", "fedcba", "2026-01-02T03:04:05Z", vcs("true"),
			buildFacts{"v1.2.0", "fedcba", "2026-01-02T03:04:05Z", "go1.26.8"}},
		{"checkout, clean", "", "", "", vcs("false"),
			buildFacts{"0123456789ab", "0123456789abcdef0123456789abcdef01234567", "2026-11-20T09:14:03Z", "go1.26.8"}},
		{"checkout, uncommitted changes", "", "", "", vcs("true"),
			buildFacts{"0123456789ab-dirty", "0123456789abcdef0123456789abcdef01234567", "2026-11-20T09:14:03Z", "go1.26.8"}},
		{"go install module@version", "", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.3.0"}},
			buildFacts{"v1.3.0", unknown, unknown, "go1.26.8"}},
		{"nothing recorded", "", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			buildFacts{"dev", unknown, unknown, "go1.26.8"}},
		{"no build info", "", "", "", nil, buildFacts{"dev", unknown, unknown, runtime.Version()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolveBuild(tt.stampV, tt.stampR, tt.stamp, tt.bi); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestStampedBinaryPrintsItsBuild runs the binary built the way
// packaging/dist.sh builds a release (testbinary: -trimpath, CGO_ENABLED=0,
// the -X stamp) and checks its version command prints the stamp.
func TestStampedBinaryPrintsItsBuild(t *testing.T) {
	bin := testbinary.Cardsync(t)
	out, err := exec.CommandContext(t.Context(), bin, "version").Output()
	if err != nil {
		t.Fatalf("cardsync version: %v", err)
	}
	want := "cardsync " + testbinary.Version + "\ncommit: " + testbinary.Revision + "\nbuilt: " + testbinary.BuildDate + "\ngo: " + runtime.Version() + "\n"
	if string(out) != want {
		t.Errorf("cardsync version printed\n%s\nwant\n%s", out, want)
	}
}
