package sim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardsync/cardsync/sim"
)

func TestAccount(t *testing.T) {
	e := start(t, sim.Options{Cards: 20})
	tok := e.token()
	r := e.get("/account", tok)
	wantStatusBody(t, r, 200, "")
	for k, want := range map[string]string{"Cache-Control": "no-cache, private"} {
		if got := r.header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if r.header.Get("Date") == "" {
		t.Error("no Date header")
	}
	want := `{"data":{"name":"Acme Growth Ltd","email":"ops@example.com","timezone":"Asia/Shanghai",` +
		`"transfer_amount":"125000.00","reach_amount":"123750.00","authorizations":null,"balance":98765.4,` +
		`"cards_balance":"-12.07","available_recharge_balance":12345678901234.56,` +
		`"available_to_apply_card_count":42,"applied_card_count":20}}`
	if string(r.body) != want {
		t.Errorf("body = %s\nwant   %s", r.body, want)
	}

	// Types exactly as in the spec's table; every field present.
	var doc struct{ Data map[string]json.RawMessage }
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{
		"name": "string", "email": "string", "timezone": "string", "transfer_amount": "amount",
		"reach_amount": "amount", "authorizations": "amount", "balance": "number", "cards_balance": "amount",
		"available_recharge_balance": "number", "available_to_apply_card_count": "integer", "applied_card_count": "integer",
	}
	if len(doc.Data) != len(kinds) {
		t.Errorf("account has %d fields, want %d", len(doc.Data), len(kinds))
	}
	amount := regexp.MustCompile(`^"-?\d+\.\d\d"$`)
	for k, kind := range kinds {
		v, ok := doc.Data[k]
		if !ok {
			t.Errorf("field %s missing", k)
			continue
		}
		s := string(v)
		if s == "null" {
			continue
		}
		var bad bool
		switch kind {
		case "string":
			bad = s[0] != '"'
		case "amount":
			bad = !amount.MatchString(s)
		case "number":
			bad = s[0] == '"' || json.Unmarshal(v, new(json.Number)) != nil
		case "integer":
			_, err := strconv.ParseInt(s, 10, 64)
			bad = err != nil
		}
		if bad {
			t.Errorf("field %s = %s, want a %s", k, s, kind)
		}
	}

	// SetAccount: exact text survives, nil is null, truth reads back.
	a := e.sim.Account()
	bal, big := "0.10", "1234567890123456"
	a.Balance, a.AvailableRechargeBalance, a.Name, a.AppliedCardCount = &bal, &big, nil, nil
	e.sim.SetAccount(a)
	bal = "changed after SetAccount"
	r = e.get("/account", tok)
	for _, frag := range []string{`"balance":0.10,`, `"available_recharge_balance":1234567890123456,`, `"name":null,`, `"applied_card_count":null}`} {
		if !bytes.Contains(r.body, []byte(frag)) {
			t.Errorf("body %s lacks %s", r.body, frag)
		}
	}
	if got := e.sim.Account(); *got.Balance != "0.10" || got.Name != nil {
		t.Errorf("Account() = balance %q name %v", *got.Balance, got.Name)
	}
}

type page struct {
	Data []json.RawMessage
	Meta struct {
		Pagination struct {
			Total, Count, PerPage, CurrentPage, TotalPages int
			Links                                          json.RawMessage
		}
	}
}

func decodePage(t *testing.T, r reply) page {
	t.Helper()
	var p page
	if r.status != 200 {
		t.Fatalf("status %d body %s", r.status, r.body)
	}
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("page body: %v", err)
	}
	// Field names in snake case.
	var raw struct {
		Meta struct{ Pagination map[string]json.RawMessage }
	}
	_ = json.Unmarshal(r.body, &raw)
	p.Meta.Pagination.PerPage = atoiRaw(raw.Meta.Pagination["per_page"])
	p.Meta.Pagination.CurrentPage = atoiRaw(raw.Meta.Pagination["current_page"])
	p.Meta.Pagination.TotalPages = atoiRaw(raw.Meta.Pagination["total_pages"])
	if len(raw.Meta.Pagination) != 6 {
		t.Errorf("pagination has keys %v, want total,count,per_page,current_page,total_pages,links", raw.Meta.Pagination)
	}
	return p
}

func atoiRaw(r json.RawMessage) int {
	n, _ := strconv.Atoi(string(r))
	return n
}

func nextLink(t *testing.T, p page) string {
	t.Helper()
	var links map[string]string
	if err := json.Unmarshal(p.Meta.Pagination.Links, &links); err != nil {
		t.Fatalf("links %s: %v", p.Meta.Pagination.Links, err)
	}
	return links["next"]
}

func TestCardsPagination(t *testing.T) {
	tests := []struct {
		cards, page, wantCount, wantPages int
		wantNext                          bool
	}{
		{0, 1, 0, 1, false},
		{0, 2, 0, 1, false},
		{1, 1, 1, 1, false},
		{15, 1, 15, 1, false},
		{15, 2, 0, 1, false},
		{30, 2, 15, 2, false},
		{31, 2, 15, 3, true},
		{31, 3, 1, 3, false},
		{31, 4, 0, 3, false},
		{45, 1, 15, 3, true},
		{45, 99999999999, 0, 3, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("cards=%d/page=%d", tt.cards, tt.page), func(t *testing.T) {
			e := start(t, sim.Options{Cards: tt.cards, Seed: 3})
			r := e.get("/cards?page="+strconv.Itoa(tt.page)+"&per_page=100&filter=a+b", e.token())
			wantStatusBody(t, r, 200, "")
			p := decodePage(t, r)
			pg := p.Meta.Pagination
			if len(p.Data) != tt.wantCount || pg.Count != tt.wantCount || pg.Total != tt.cards ||
				pg.PerPage != 15 || pg.CurrentPage != tt.page || pg.TotalPages != tt.wantPages {
				t.Errorf("got %d items, pagination %+v; want count %d total %d per_page 15 current %d pages %d",
					len(p.Data), pg, tt.wantCount, tt.cards, tt.page, tt.wantPages)
			}
			next := nextLink(t, p)
			if !tt.wantNext {
				if string(pg.Links) != "{}" {
					t.Errorf("links = %s, want {}", pg.Links)
				}
				return
			}
			u, err := url.Parse(next)
			if err != nil || u.Scheme+"://"+u.Host != e.ts.URL || u.Path != "/cards" {
				t.Fatalf("next = %q, want an absolute URL on %s/cards", next, e.ts.URL)
			}
			q := u.Query()
			if q.Get("page") != strconv.Itoa(tt.page+1) || q.Get("per_page") != "100" || q.Get("filter") != "a b" {
				t.Errorf("next query = %v, want page=%d and the other parameters kept", q, tt.page+1)
			}
			// The items are the truth, in order.
			truth := e.sim.Cards()
			for i, raw := range p.Data {
				if want := truth[(tt.page-1)*15+i].JSON(); !bytes.Equal(raw, want) {
					t.Errorf("item %d = %s, want %s", i, raw, want)
				}
			}
		})
	}
}

func TestCardsPageParameter(t *testing.T) {
	e := start(t, sim.Options{Cards: 40})
	tok := e.token()
	for _, q := range []string{"", "?page=", "?per_page=5", "?page=1&per_page=500"} {
		p := decodePage(t, e.get("/cards"+q, tok))
		if p.Meta.Pagination.CurrentPage != 1 || len(p.Data) != 15 {
			t.Errorf("%q: current_page %d, %d items; want 1, 15", q, p.Meta.Pagination.CurrentPage, len(p.Data))
		}
	}
	for _, v := range []string{"0", "-1", "abc", "1.5", "2x", "+2", "99999999999999999999999"} {
		r := e.get("/cards?page="+url.QueryEscape(v), tok)
		wantStatusBody(t, r, 422, "")
		m := r.json(t)
		errs, _ := m["errors"].(map[string]any)
		if m["message"] != "The given data was invalid." || m["status_code"] != float64(422) || errs["page"] == nil {
			t.Errorf("page=%s: body %s, want the Laravel 422 shape with errors.page", v, r.body)
		}
	}
}

func TestBaseURLAndPreviousLinks(t *testing.T) {
	e := start(t, sim.Options{Cards: 50, BaseURL: "https://api.example.com/", PreviousLinks: true})
	p := decodePage(t, e.get("/cards?page=2", e.token()))
	want := `{"previous":"https://api.example.com/cards?page=1","next":"https://api.example.com/cards?page=3"}`
	if string(p.Meta.Pagination.Links) != want {
		t.Errorf("links = %s, want %s", p.Meta.Pagination.Links, want)
	}
}

func TestMutations(t *testing.T) {
	e := start(t, sim.Options{Cards: 20})
	tok := e.token()
	before := e.sim.Cards()

	added := e.sim.AddCard()
	if added.Number <= before[len(before)-1].Number {
		t.Errorf("added id %d not above %d", added.Number, before[len(before)-1].Number)
	}
	if want := e.clock.Now().UTC().Format("2006-01-02T15:04:05Z"); !strings.Contains(string(added.JSON()), `"created_at":"`+want+`"`) {
		t.Errorf("added card %s not created at %s", added.JSON(), want)
	}
	if !e.sim.RemoveCard(before[0].ID) || e.sim.RemoveCard(before[0].ID) || e.sim.RemoveCard("nope") {
		t.Error("RemoveCard results wrong")
	}
	e.clock.Advance(time.Hour)
	if !e.sim.UpdateCard(before[1].ID) || e.sim.UpdateCard("nope") {
		t.Error("UpdateCard results wrong")
	}
	after := e.sim.Cards()
	if len(after) != 20 || after[0].ID != before[1].ID || after[19].ID != added.ID {
		t.Fatalf("cards after mutations: %d, first %s, last %s", len(after), after[0].ID, after[19].ID)
	}
	u := after[0]
	if u.Balance == before[1].Balance || u.Status == before[1].Status || !u.UpdatedAt.After(before[1].UpdatedAt) ||
		bytes.Equal(u.JSON(), before[1].JSON()) {
		t.Errorf("updated card unchanged: %s", u.JSON())
	}
	// Served pages reflect the truth.
	p1 := decodePage(t, e.get("/cards?page=1", tok))
	p2 := decodePage(t, e.get("/cards?page=2", tok))
	got := append(p1.Data, p2.Data...)
	for i := range after {
		if !bytes.Equal(got[i], after[i].JSON()) {
			t.Errorf("served card %d = %s, want %s", i, got[i], after[i].JSON())
		}
	}
	// Copies: changing the returned card changes nothing.
	after[0].Status = "x"
	if e.sim.Cards()[0].Status == "x" {
		t.Error("Cards returned shared data")
	}
}

func TestOnPageServed(t *testing.T) {
	e := start(t, sim.Options{Cards: 45})
	tok := e.token()
	first := e.sim.Cards()[0]
	var pages []int
	e.sim.OnPageServed(func(page int) {
		pages = append(pages, page)
		if page == 1 {
			e.sim.RemoveCard(first.ID) // drift: every later card moves up one slot
		}
	})
	p1 := decodePage(t, e.get("/cards?page=1", tok))
	if !bytes.Equal(p1.Data[0], first.JSON()) || p1.Meta.Pagination.Total != 45 {
		t.Errorf("page 1 saw the hook's change")
	}
	p2 := decodePage(t, e.get("/cards?page=2", tok))
	if p2.Meta.Pagination.Total != 44 {
		t.Errorf("page 2 total = %d, want 44 (hook ran before it)", p2.Meta.Pagination.Total)
	}
	if len(pages) != 2 || pages[0] != 1 || pages[1] != 2 {
		t.Errorf("hook saw pages %v", pages)
	}
	e.sim.OnPageServed(nil)
	decodePage(t, e.get("/cards?page=3", tok))
	if len(pages) != 2 {
		t.Errorf("hook ran after removal")
	}
}

func TestNotFoundAndMethods(t *testing.T) {
	e := start(t, sim.Options{Cards: 1})
	tok := e.token()
	tests := []struct {
		method, path string
		status       int
		allow        string
	}{
		{http.MethodGet, "/nope", 404, ""},
		{http.MethodGet, "/cards/1", 404, ""},
		{http.MethodGet, "/", 404, ""},
		{http.MethodGet, tokenPath, 405, "POST"},
		{http.MethodPut, tokenPath, 405, "POST"},
		{http.MethodPost, "/account", 405, "GET, HEAD"},
		{http.MethodDelete, "/cards", 405, "GET, HEAD"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := e.do(tt.method, tt.path, tok, "", "")
			wantStatusBody(t, r, tt.status, "")
			m := r.json(t)
			if m["status_code"] != float64(tt.status) || m["message"] == "" {
				t.Errorf("body %s", r.body)
			}
			if got := r.header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow = %q, want %q", got, tt.allow)
			}
		})
	}
	if got := e.sim.Stats().Requests["other"]; got != 3 {
		t.Errorf("Stats().Requests[other] = %d, want 3", got)
	}
}

// TestUniqueFields: Options.UniqueFields puts each of its names on exactly
// one card, padded to FieldNameBytes, round robin over the cards.
func TestUniqueFields(t *testing.T) {
	s := sim.New(sim.Options{Cards: 30, Seed: 7, UniqueFields: 75, FieldNameBytes: 40})
	seen := map[string]int{}
	for i, c := range s.Cards() {
		var m map[string]any
		if err := json.Unmarshal(c.JSON(), &m); err != nil {
			t.Fatalf("card %s: %v", c.ID, err)
		}
		n := 0
		for k, v := range m {
			if !strings.HasPrefix(k, "u") || !strings.HasSuffix(k, "xx") {
				continue
			}
			n++
			seen[k]++
			if len(k) != 40 {
				t.Errorf("field %q is %d bytes, want 40", k, len(k))
			}
			if j := int(v.(float64)); j%30 != i {
				t.Errorf("card %d holds field %d", i, j)
			}
		}
		if want := 2 + map[bool]int{true: 1}[i < 15]; n != want {
			t.Errorf("card %d holds %d unique fields, want %d", i, n, want)
		}
	}
	if len(seen) != 75 {
		t.Errorf("%d distinct names, want 75", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("field %q on %d cards", k, n)
		}
	}
}
