package sim_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/sim"
)

// TestEnvelopeFaults: each envelope fault serves the same data in the
// wrapping it names.
func TestEnvelopeFaults(t *testing.T) {
	t.Run("links-shapes rotates", func(t *testing.T) {
		e := start(t, sim.Options{Cards: 40, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultLinksShapes}}})
		tok := e.token()
		next := e.ts.URL + "/cards?page=2"
		want := []string{`{"next":2}`, `{"next":{"href":"` + next + `"}}`, `"` + next + `"`, `true`, `["` + next + `"]`, `{"next":2}`}
		for i, w := range want {
			r := e.get("/cards?page=1", tok)
			p := decodePage(t, r)
			if got := string(p.Meta.Pagination.Links); got != w || len(p.Data) != 15 {
				t.Errorf("request %d: links %s, %d items; want %s and 15", i, got, len(p.Data), w)
			}
		}
		// The last page names itself, in the same shapes.
		if got := string(decodePage(t, e.get("/cards?page=3", tok)).Meta.Pagination.Links); got != `{"next":{"href":"`+e.ts.URL+`/cards?page=3"}}` {
			t.Errorf("last page: links %s", got)
		}
	})
	t.Run("bom", func(t *testing.T) {
		e := start(t, sim.Options{Cards: 20, Faults: []sim.Fault{{Kind: sim.FaultBOM}}})
		login := e.login()
		if !bytes.HasPrefix(login.body, []byte("\xEF\xBB\xBF{")) {
			t.Fatalf("token body %.20q: want a BOM", login.body)
		}
		var tr struct {
			AccessToken string `json:"access_token"`
		}
		if err := json.Unmarshal(bytes.TrimPrefix(login.body, []byte("\xEF\xBB\xBF")), &tr); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/account", "/cards?page=2"} {
			r := e.get(path, tr.AccessToken)
			rest, ok := bytes.CutPrefix(r.body, []byte("\xEF\xBB\xBF"))
			if r.status != 200 || !ok || !json.Valid(rest) || r.header.Get("Content-Length") != itoa(len(r.body)) {
				t.Errorf("%s: status %d, body %.20q, Content-Length %s of %d", path, r.status, r.body, r.header.Get("Content-Length"), len(r.body))
			}
		}
	})
	t.Run("content-type", func(t *testing.T) {
		e := start(t, sim.Options{Cards: 20, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultContentType}}})
		tok := e.token()
		for i, want := range []string{"text/plain; charset=UTF-8", "", "text/plain; charset=UTF-8"} {
			r := e.get("/cards", tok)
			if got, ok := r.header["Content-Type"]; r.status != 200 || !json.Valid(r.body) || want == "" && ok || want != "" && (len(got) != 1 || got[0] != want) {
				t.Errorf("request %d: status %d, Content-Type %q; want %q", i, r.status, got, want)
			}
		}
	})
	t.Run("deep-meta", func(t *testing.T) {
		e := start(t, sim.Options{Cards: 20, Faults: []sim.Fault{{Kind: sim.FaultDeepMeta}}})
		tok := e.token()
		r := e.get("/cards", tok)
		want := `"meta":{"debug":` + strings.Repeat("[", sim.DefaultDeepMetaDepth) + strings.Repeat("]", sim.DefaultDeepMetaDepth) + `,"pagination":{"total":20,`
		if r.status != 200 || !bytes.Contains(r.body, []byte(want)) {
			t.Errorf("status %d, body without a %d-deep meta.debug", r.status, sim.DefaultDeepMetaDepth)
		}
		if a := e.get("/account", tok); bytes.Contains(a.body, []byte("debug")) {
			t.Errorf("deep-meta changed /account")
		}
	})
	t.Run("no-content", func(t *testing.T) {
		e := start(t, sim.Options{Cards: 20, Faults: []sim.Fault{{Endpoint: "cards", Kind: sim.FaultNoContent, Times: 1}}})
		tok := e.token()
		if r := e.get("/cards", tok); r.status != http.StatusNoContent || len(r.body) != 0 {
			t.Errorf("status %d body %q, want 204 and nothing", r.status, r.body)
		}
		wantStatusBody(t, e.get("/cards", tok), 200, "")
	})
	t.Run("redirect", func(t *testing.T) {
		for _, tt := range []struct{ fault, want string }{{"redirect", "/login"}, {"redirect=https://other.example/api/cards", "https://other.example/api/cards"}} {
			f, err := sim.ParseFault(tt.fault)
			if err != nil {
				t.Fatal(err)
			}
			e := start(t, sim.Options{Cards: 20, Faults: []sim.Fault{f}})
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			res, err := c.Get(e.ts.URL + "/account")
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusFound || res.Header.Get("Location") != tt.want {
				t.Errorf("%s: status %d, Location %q; want 302 to %s", tt.fault, res.StatusCode, res.Header.Get("Location"), tt.want)
			}
		}
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestParseEnvelopeFaults(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want sim.Fault
	}{
		{"cards:links-shapes", sim.Fault{Endpoint: "cards", Kind: sim.FaultLinksShapes}},
		{"bom", sim.Fault{Kind: sim.FaultBOM}},
		{"cards:content-type,times=2", sim.Fault{Endpoint: "cards", Kind: sim.FaultContentType, Times: 2}},
		{"deep-meta", sim.Fault{Kind: sim.FaultDeepMeta}},
		{"deep-meta=500,pages=2", sim.Fault{Kind: sim.FaultDeepMeta, Depth: 500, Pages: []int{2}}},
		{"account:no-content,times=1", sim.Fault{Endpoint: "account", Kind: sim.FaultNoContent, Times: 1}},
		{"redirect", sim.Fault{Kind: sim.FaultRedirect}},
		{"cards:redirect=https://other.example/cards", sim.Fault{Endpoint: "cards", Kind: sim.FaultRedirect, URL: "https://other.example/cards"}},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := sim.ParseFault(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			again, err := sim.ParseFault(got.String())
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("String() %q does not round-trip: %+v, %v", got.String(), again, err)
			}
		})
	}
	for _, bad := range []string{"bom=1", "links-shapes=2", "deep-meta=-1", "deep-meta=x", "no-content=1"} {
		if _, err := sim.ParseFault(bad); !errors.Is(err, sim.ErrBadFault) {
			t.Errorf("ParseFault(%q) error = %v, want ErrBadFault", bad, err)
		}
	}
}
