package main

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/internal/testbinary"
)

// imageDoc is the guide that shows the image's configuration, and the
// header of its table.
const (
	imageDoc       = "docs/operating.md"
	imageDocHeader = "| image config | value |"
)

// docImageConfig reads the image config table of text: each row's key and
// its value, the text between the backticks of the value cell (Labels: the
// label names, one per backticked span).
func docImageConfig(t *testing.T, text string) map[string][]string {
	t.Helper()
	_, table, ok := strings.Cut(text, "\n"+imageDocHeader+"\n")
	if !ok {
		t.Fatalf("%s has no table headed %q", imageDoc, imageDocHeader)
	}
	span := regexp.MustCompile("`([^`]+)`")
	row := regexp.MustCompile("^\\| `([A-Za-z]+)` \\| (.+) \\|$")
	rows := map[string][]string{}
	for i, line := range strings.Split(table, "\n") {
		if i == 0 && strings.HasPrefix(line, "|---") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s: image config row %q is not | `Key` | `value` |", imageDoc, line)
		}
		if _, dup := rows[m[1]]; dup {
			t.Errorf("%s: image config key %s twice", imageDoc, m[1])
		}
		for _, v := range span.FindAllStringSubmatch(m[2], -1) {
			rows[m[1]] = append(rows[m[1]], v[1])
		}
	}
	return rows
}

// compactJSON is b compacted, or t fails naming what.
func compactJSON(t *testing.T, what string, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Errorf("%s: not JSON: %v: %s", what, err, b)
	}
	return out.String()
}

// TestImageConfigIsDocumented builds an image archive as make dist does and
// holds docs/operating.md's table of its configuration to it: every field
// of the image config's config object is in the table, none more, and each
// value is the image's (JSON compared compact; Labels by their names,
// whose values differ per build). The image is not run, so any Go binary
// will do.
func TestImageConfigIsDocumented(t *testing.T) {
	bin := smallBinary(t)
	file := filepath.Join(t.TempDir(), "image.tar")
	err := run(t.Context(), []string{"oci", "-o", file, "-mtime", "1790000000", "-version", "v1.2.3",
		"-revision", testbinary.Revision, "-source", "https://example.org/cardsync",
		"-license", filepath.Join("..", "..", "LICENSE"), "-modcache", modCache(t),
		"linux/amd64=" + bin, "linux/arm64=" + bin}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join("..", "..", imageDoc))
	if err != nil {
		t.Fatal(err)
	}
	doc := docImageConfig(t, string(text))
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := readOCI(file, "linux", arch)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(img.Config.Config)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			t.Fatal(err)
		}
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			v, ok := doc[k]
			switch {
			case !ok:
				t.Errorf("linux/%s: the image config has %s = %s; %s's table does not show it", arch, k, fields[k], imageDoc)
			case k == "Labels":
				if got := slices.Sorted(maps.Keys(img.Config.Config.Labels)); !slices.Equal(got, slices.Sorted(slices.Values(v))) {
					t.Errorf("linux/%s: labels %q; %s names %q", arch, got, imageDoc, v)
				}
			case len(v) != 1:
				t.Errorf("%s: image config %s: want one `value`, got %q", imageDoc, k, v)
			default:
				if got, want := compactJSON(t, "the image's "+k, fields[k]), compactJSON(t, imageDoc+"'s "+k, []byte(v[0])); got != want {
					t.Errorf("linux/%s: image config %s = %s; %s says %s", arch, k, got, imageDoc, want)
				}
			}
		}
		for k := range doc {
			if _, ok := fields[k]; !ok {
				t.Errorf("%s shows image config %s; the image has none", imageDoc, k)
			}
		}
	}
}

// TestDocImageConfig: the table reader finds the rows between the header
// and the first line that is not a row, and refuses a row it cannot read,
// so the test above compares what the guide says.
func TestDocImageConfig(t *testing.T) {
	text := "intro\n" + imageDocHeader + "\n|---|---|\n| `Cmd` | `[\"serve\"]` |\n| `Labels` | `a.b`, `c.d` |\n\nafter\n| `User` | `\"x\"` |\n"
	got := docImageConfig(t, text)
	want := map[string][]string{"Cmd": {`["serve"]`}, "Labels": {"a.b", "c.d"}}
	if len(got) != len(want) || !slices.Equal(got["Cmd"], want["Cmd"]) || !slices.Equal(got["Labels"], want["Labels"]) {
		t.Errorf("docImageConfig = %q, want %q", got, want)
	}
}
