//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/internal/testbinary"
	"github.com/cardsync/cardsync/sim"
)

// chromiumFlags start headless Chromium quietly and, with host names
// resolving nowhere, keep anything it might try from leaving the machine.
func chromiumFlags() []string {
	return []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update",
		"--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND",
	}
}

// findChromium returns the chromium binary, skipping the test when it is
// missing, except in CI (CARDSYNC_REQUIRE_TOOLS set), where it fails.
func findChromium(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CARDSYNC_REQUIRE_TOOLS") != "" {
			t.Fatal("chromium not installed and CARDSYNC_REQUIRE_TOOLS is set (apt-get install -y chromium)")
		}
		t.Skip("chromium not installed (apt-get install -y chromium)")
	}
	return p
}

// shot is one headless Chromium screenshot of a file and the requests the
// page made, from Chromium's own network log.
type shot struct {
	img image.Image
	// pageRequests are the URLs the page asked for (its initiator is the
	// page), other than file: and data: URLs. The browser's own background
	// requests (component updates, time, accounts) have no page initiator
	// and are not counted; they fail anyway, as no name resolves.
	pageRequests []string
}

func screenshot(t *testing.T, chromium, page string, extra ...string) shot {
	t.Helper()
	dir := t.TempDir()
	png1 := filepath.Join(dir, "shot.png")
	netlog := filepath.Join(dir, "netlog.json")
	args := append(chromiumFlags(), extra...)
	args = append(args, "--user-data-dir="+filepath.Join(dir, "profile"), "--log-net-log="+netlog,
		"--screenshot="+png1, "--window-size=1280,2000", "file://"+page)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, args...)
	testbinary.Own(cmd) // chromium's helpers die with it
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, lastLines(string(out)))
	}
	f, err := os.Open(png1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	return shot{img: img, pageRequests: pageRequests(t, netlog)}
}

// pageRequests reads a Chromium net log (JSON) and returns the URLs of
// requests a page initiated.
func pageRequests(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int `json:"type"`
			Params struct {
				URL       string `json:"url"`
				Initiator string `json:"initiator"`
				NIK       string `json:"network_isolation_key"`
			} `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(b, &log); err != nil {
		// A log cut short lacks its closing brackets.
		if err2 := json.Unmarshal(append(bytes.TrimRight(b, ",\n"), []byte("]}")...), &log); err2 != nil {
			t.Fatalf("read net log: %v", err)
		}
	}
	start, ok := log.Constants.LogEventTypes["URL_REQUEST_START_JOB"]
	if !ok {
		t.Fatal("net log has no URL_REQUEST_START_JOB event type")
	}
	var out []string
	for _, e := range log.Events {
		p := e.Params
		if e.Type != start || p.URL == "" {
			continue
		}
		fromPage := p.Initiator != "not an origin" || strings.HasPrefix(p.NIK, "file:")
		if fromPage && !strings.HasPrefix(p.URL, "file:") && !strings.HasPrefix(p.URL, "data:") {
			out = append(out, p.URL)
		}
	}
	return out
}

// painted counts the distinct colours of an image and the share of pixels
// that differ from its top-left pixel (the page background).
func painted(img image.Image) (colours int, share float64, bg [4]uint32) {
	b := img.Bounds()
	r, g, bl, a := img.At(b.Min.X, b.Min.Y).RGBA()
	bg = [4]uint32{r, g, bl, a}
	seen := map[[4]uint32]bool{}
	var other int
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			c := [4]uint32{r, g, bl, a}
			seen[c] = true
			if c != bg {
				other++
			}
		}
	}
	return len(seen), float64(other) / float64(b.Dx()*b.Dy()), bg
}

// TestReportInChromium renders `cardsync report` of a warehouse built by
// runs on the simulator in headless Chromium, light and dark: the page is
// drawn (not blank), and it made no network request. A probe page that
// does reference the network proves the check can see one.
func TestReportInChromium(t *testing.T) {
	chromium := findChromium(t)
	up := newUpstream(t, sim.Options{Seed: 15, Cards: 150, OddData: true, AccountDrift: true, FloatNoise: true})
	d := newDeployment(t, up)
	d.backfillOK(t)
	var ordinary []sim.Card
	for _, c := range up.Cards() {
		if c.Odd == "" {
			ordinary = append(ordinary, c)
		}
	}
	up.UpdateCard(ordinary[0].ID)
	up.UpdateCard(ordinary[1].ID)
	up.RemoveCard(ordinary[2].ID)
	up.AddCard()
	d.backfillOK(t)
	d.backfillOK(t)

	page := filepath.Join(d.dir, "report.html")
	code, out, errOut := d.run("report", "-o", page, "-since", "90d")
	if code != 0 || !strings.Contains(out, page) {
		t.Fatalf("report exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	lower := strings.ToLower(string(html))
	for _, bad := range []string{"<script", "http://", "https://", "url(", "@font-face", "@import"} {
		if strings.Contains(lower, bad) {
			t.Errorf("the report contains %q", bad)
		}
	}
	if len(html) >= 512_000 {
		t.Errorf("report is %d bytes, want under 512,000", len(html))
	}

	t.Run("probe", func(t *testing.T) {
		probe := filepath.Join(t.TempDir(), "probe.html")
		if err := os.WriteFile(probe, []byte(`<!DOCTYPE html><p>probe</p><img src="http://cardsync-probe.invalid/x.png">`), 0o644); err != nil {
			t.Fatal(err)
		}
		s := screenshot(t, chromium, probe)
		if len(s.pageRequests) == 0 {
			t.Fatal("a page with a remote image made no request the net log shows: the check below would prove nothing")
		}
	})
	t.Run("light", func(t *testing.T) {
		s := screenshot(t, chromium, page, "--blink-settings=preferredColorScheme=1")
		if len(s.pageRequests) > 0 {
			t.Errorf("the report made network requests: %v", s.pageRequests)
		}
		colours, share, bg := painted(s.img)
		t.Logf("light: %d colours, %.1f%% of pixels drawn, background %v", colours, 100*share, bg)
		if colours < 16 || share < 0.03 {
			t.Errorf("screenshot looks blank: %d colours, %.2f%% of pixels not background", colours, 100*share)
		}
		if bg[0] < 0xe000 {
			t.Errorf("light mode background %v, want near white", bg)
		}
	})
	t.Run("dark", func(t *testing.T) {
		s := screenshot(t, chromium, page, "--blink-settings=preferredColorScheme=0")
		if len(s.pageRequests) > 0 {
			t.Errorf("the report made network requests: %v", s.pageRequests)
		}
		colours, share, bg := painted(s.img)
		t.Logf("dark: %d colours, %.1f%% of pixels drawn, background %v", colours, 100*share, bg)
		if colours < 16 || share < 0.03 {
			t.Errorf("screenshot looks blank: %d colours, %.2f%% of pixels not background", colours, 100*share)
		}
		if bg[0] > 0x4000 {
			t.Errorf("dark mode background %v, want near black", bg)
		}
	})
}
