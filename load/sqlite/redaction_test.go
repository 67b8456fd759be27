package sqlite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/redact"
	"github.com/cardsync/cardsync/redact/redacttest"
)

// TestPANCorpusNeverStored stores every card number of every network in
// every shape, in every place a card can hold it (string values, text, keys,
// arrays, deep nesting, JSON integers, the account's raw JSON, a rejected
// item), then searches the database and WAL bytes: no full number is
// there. Look-alikes are stored exactly as sent.
func TestPANCorpusNeverStored(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	ctx := t.Context()
	run := startRun(t, w)
	corpus := redacttest.PANCorpus()
	if testing.Short() {
		// Every network and shape is still there, at fewer lengths.
		var some []redacttest.Sample
		for i := 0; i < len(corpus); i += 5 {
			some = append(some, corpus[i])
		}
		corpus = some
	}
	var cards []load.Card
	for i, s := range corpus {
		text, _ := json.Marshal(s.Text)
		nested := strings.Repeat(`{"n":`, 200) + string(text) + strings.Repeat(`}`, 200)
		doc := fmt.Sprintf(`{"id":%d,"note":%s,"by_key":{%s:"x"},"list":[1,%s],"deep":%s`, i+1, text, text, text, nested)
		if isAllDigits(s.Text) || redacttest.JSONNumber(s.Text) {
			doc += fmt.Sprintf(`,"reference":%s,"nums":[%s]`, s.Text, s.Text)
		}
		cards = append(cards, load.Card{ID: fmt.Sprint(i + 1), Data: []byte(doc + "}")})
	}
	for p := 0; p*15 < len(cards); p++ {
		hi := min((p+1)*15, len(cards))
		pg := load.Page{Number: p + 1, TotalPages: (len(cards) + 14) / 15, TotalItems: len(cards), Cards: cards[p*15 : hi]}
		if p == 0 {
			pg.Rejected = []load.Rejection{{Index: 99, Reason: "test", Data: []byte(`{"pan":"` + corpus[0].Text + `"}`)}}
		}
		commit(t, w, run, pg)
	}
	raw, _ := json.Marshal(map[string]string{"note": corpus[1].Text})
	if err := w.SaveAccount(ctx, run, load.Account{Raw: raw}); err != nil {
		t.Fatal(err)
	}
	look := redacttest.LookAlikes()
	var doc bytes.Buffer
	doc.WriteString(`{"id":"look"`)
	for i, l := range look {
		b, _ := json.Marshal(l)
		fmt.Fprintf(&doc, `,"s%d":%s`, i, b)
		if isAllDigits(l) && len(l) < 25 && l[0] != '0' {
			fmt.Fprintf(&doc, `,"n%d":%s`, i, l)
		}
	}
	doc.WriteString("}")
	commit(t, w, run, load.Page{Number: 99, TotalPages: 99, TotalItems: len(cards) + 1, Cards: []load.Card{{ID: "look", Data: doc.Bytes()}}})
	stored := queryString(t, w, `SELECT data FROM cards WHERE card_id = 'look'`)
	for i, l := range look {
		var v map[string]any
		dec := json.NewDecoder(strings.NewReader(stored))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(v[fmt.Sprintf("s%d", i)]); got != l {
			t.Errorf("look-alike %q stored as %q", l, got)
		}
		if n, ok := v[fmt.Sprintf("n%d", i)]; ok && fmt.Sprint(n) != l {
			t.Errorf("look-alike number %s stored as %v", l, n)
		}
	}
	// Search the database and the WAL while the writer is open (the WAL
	// then holds every page written), and the database again after Close
	// checkpointed it.
	var files []byte
	for _, f := range []string{path, path + "-wal"} {
		files = append(files, readFileIfExists(t, f)...)
	}
	if len(readFileIfExists(t, path+"-wal")) < 10000 {
		t.Fatalf("the WAL holds only %d bytes: the search would prove little", len(readFileIfExists(t, path+"-wal")))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files = append(files, readFileIfExists(t, path)...)
	for _, s := range corpus {
		if bytes.Contains(files, []byte(s.Digits)) {
			t.Errorf("%s: %s stored", s.Name, s.Digits)
		}
		if s.Text != s.Digits && bytes.Contains(files, []byte(s.Text)) {
			t.Errorf("%s: %q stored", s.Name, s.Text)
		}
	}
}

// TestSecretKeysNeverStored stores a card with every secret key of the
// corpus, holding a string, a number, an array and an object, at the top and
// nested, then searches the database and WAL bytes: no value is there, and
// every look-alike key is stored with its value.
func TestSecretKeysNeverStored(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	run := startRun(t, w)
	var doc bytes.Buffer
	doc.WriteString(`{"id":"keys"`)
	var secrets []string
	for i, key := range redacttest.SecretKeys() {
		k, _ := json.Marshal(key)
		canary := fmt.Sprintf("canary-%03d-", i)
		fmt.Fprintf(&doc, `,%[1]s:"%[2]ss","n%[4]d":{%[1]s:%[3]d},"a%[4]d":{%[1]s:["%[2]sa"]},"o%[4]d":[{%[1]s:{"value":"%[2]so"}}]`,
			k, canary, 7300000+i, i)
		secrets = append(secrets, canary, fmt.Sprint(7300000+i))
	}
	for i, key := range redacttest.LookAlikeKeys() {
		k, _ := json.Marshal(key)
		fmt.Fprintf(&doc, `,"l%d":{%s:"kept-%03d"}`, i, k, i)
	}
	doc.WriteString("}")
	data := doc.String()
	if !json.Valid([]byte(data)) {
		t.Fatalf("test document is not JSON: %s", data)
	}
	commit(t, w, run, load.Page{Number: 1, TotalPages: 1, TotalItems: 1, Cards: []load.Card{{ID: "keys", Data: []byte(data)}}})
	stored := queryString(t, w, `SELECT data FROM cards WHERE card_id = 'keys'`)
	for i := range redacttest.LookAlikeKeys() {
		if want := fmt.Sprintf("kept-%03d", i); !strings.Contains(stored, want) {
			t.Errorf("look-alike key %q dropped: %s", redacttest.LookAlikeKeys()[i], stored)
		}
	}
	var files []byte
	for _, f := range []string{path, path + "-wal"} {
		files = append(files, readFileIfExists(t, f)...)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files = append(files, readFileIfExists(t, path)...)
	for _, c := range secrets {
		if bytes.Contains(files, []byte(c)) {
			t.Errorf("secret value %s stored", c)
		}
	}
}

func isAllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// TestUpgradeFromRelease1 opens a warehouse written by release 1 (schema 1):
// the upgrade keeps every row, re-applies the current redaction policy to
// what was stored (card numbers release 1 missed are masked; keys stored
// with PHP escapes become UTF-8 so Debian's sqlite3 reads them), names the
// flat view's columns and rebuilds it.
func TestUpgradeFromRelease1(t *testing.T) {
	path := release1Warehouse(t)
	before := tableCounts(t, path)
	lastSeen := lastSeenByCard(t, path)
	w, err := Open(t.Context(), path, load.Options{})
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	defer w.Close()
	after := tableCounts(t, path)
	// Schema 3 renamed the cards table to card_state (cards is a view of
	// it) and made walk_seen one row per page; release 1 left it empty.
	renamed := map[string]string{"cards": "card_state"}
	for table, n := range before {
		now, ok := renamed[table]
		if !ok {
			now = table
		}
		if after[now] != n {
			t.Errorf("%s: %d rows before the upgrade, %d in %s after", table, n, after[now], now)
		}
	}
	// Schema 3: the cards view answers for every card, with the same
	// last_seen_* for removed and pending cards and the same or later for
	// current ones; every card has its hash.
	if got := queryInt(t, w, `SELECT count(*) FROM cards`); got != before["cards"] {
		t.Errorf("cards view: %d rows, want %d", got, before["cards"])
	}
	for id, was := range lastSeen {
		var at string
		var run int64
		var current bool
		if err := w.db.QueryRowContext(t.Context(), `SELECT last_seen_at, last_seen_run, removed_at IS NULL AND card_id NOT IN (SELECT card_id FROM removal_pending)
			FROM cards WHERE card_id = ?`, id).Scan(&at, &run, &current); err != nil {
			t.Fatalf("card %s: %v", id, err)
		}
		switch {
		case current && (run < was.run || at < was.at):
			t.Errorf("card %s: last seen %s (run %d) after the upgrade, %s (run %d) before: want the same or later", id, at, run, was.at, was.run)
		case !current && (run != was.run || at != was.at):
			t.Errorf("removed or pending card %s: last seen %s (run %d) after the upgrade, %s (run %d) before", id, at, run, was.at, was.run)
		}
	}
	rows, err := w.db.QueryContext(t.Context(), `SELECT card_id, data, data_hash FROM card_state`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, data string
		var hash []byte
		if err := rows.Scan(&id, &data, &hash); err != nil {
			t.Fatal(err)
		}
		if want := load.DataHash([]byte(data)); !bytes.Equal(hash, want) {
			t.Errorf("card %s: data_hash %x, want %x", id, hash, want)
		}
	}
	rows.Close()
	for _, c := range []struct{ card, has, hasNot string }{
		{"9001", `"note":"card 4111\u00a011**\u00a0****\u00a01111 on file"`, ""},
		{"9001", `"café":"crème"`, `\u00e9`},
		{"9001", `"url":"https://example.com/x"`, `\/`},
		{"9002", `"ref":"5500/00**/****/0004"`, "5500/0000"},
		{"9002", `"reference_no":"401288******1881"`, "4012888888881881"},
		{"9002", `"created_ms":1700000000007`, ""},
		{"9003", `"378282*****0005"`, "378282246310005"},
	} {
		data := queryString(t, w, `SELECT data FROM cards WHERE card_id = ?`, c.card)
		if !strings.Contains(data, strings.ReplaceAll(c.has, `\u00a0`, "\u00a0")) || c.hasNot != "" && strings.Contains(data, c.hasNot) {
			t.Errorf("card %s: %s\nwant it to contain %s and not %q", c.card, data, c.has, c.hasNot)
		}
		if v := queryString(t, w, `SELECT data FROM card_versions WHERE card_id = ? AND valid_to IS NULL`, c.card); v != data {
			t.Errorf("card %s: current version differs from cards.data after the upgrade", c.card)
		}
	}
	if got := queryString(t, w, `SELECT json_extract(data, '$."café"') FROM cards WHERE card_id = '9001'`); got != "crème" {
		t.Errorf("escaped key still unreadable by path: %q", got)
	}
	if got := queryInt(t, w, `SELECT count(*) FROM card_fields WHERE column_name IS NULL`); got != 0 {
		t.Errorf("%d fields without a column name", got)
	}
	if got := queryString(t, w, `SELECT group_concat(column_name, ',') FROM card_fields WHERE lower(name) = 'status' ORDER BY rowid`); got != "status,Status_2" {
		t.Errorf("status columns = %q, want status,Status_2 (release 1's names kept)", got)
	}
	var version int
	if err := w.db.QueryRowContext(t.Context(), `PRAGMA user_version`).Scan(&version); err != nil || version != SchemaVersion() {
		t.Errorf("user_version %d, %v; want %d", version, err, SchemaVersion())
	}
	w.Close()
	for _, f := range []string{path, path + "-wal"} {
		b := readFileIfExists(t, f)
		for _, pan := range []string{"4111\u00a01111\u00a01111\u00a01111", "5500/0000/0000/0004", "4012888888881881", "378282246310005"} {
			if bytes.Contains(b, []byte(pan)) {
				t.Errorf("%s still holds %q after the upgrade", filepath.Base(f), pan)
			}
		}
	}
}

// release1Warehouse builds a file from testdata/release1.sql, a dump of a
// warehouse written by release 1.
func release1Warehouse(t *testing.T) string {
	t.Helper()
	return releaseWarehouse(t, "release1")
}

// releaseWarehouse builds a file from testdata/<name>.sql, a dump of a
// warehouse written by an earlier release.
func releaseWarehouse(t *testing.T, name string) string {
	t.Helper()
	dump, err := os.ReadFile(filepath.Join("testdata", name+".sql"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".db")
	if err := LoadSQL(t.Context(), path, string(dump)); err != nil {
		t.Fatal(err)
	}
	return path
}

type seenAt struct {
	at  string
	run int64
}

// lastSeenByCard reads last_seen_at/last_seen_run of every card of the
// file (opened raw), before an upgrade.
func lastSeenByCard(t *testing.T, path string) map[string]seenAt {
	t.Helper()
	db := rawDB(t, path)
	defer db.Close()
	rows, err := db.QueryContext(t.Context(), `SELECT card_id, last_seen_at, last_seen_run FROM cards`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]seenAt{}
	for rows.Next() {
		var id string
		var s seenAt
		if err := rows.Scan(&id, &s.at, &s.run); err != nil {
			t.Fatal(err)
		}
		out[id] = s
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// tableCounts counts the rows of every table of the file (opened raw).
func tableCounts(t *testing.T, path string) map[string]int64 {
	t.Helper()
	db := rawDB(t, path)
	defer db.Close()
	rows, err := db.QueryContext(t.Context(), `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	rows.Close()
	out := map[string]int64{}
	for _, n := range names {
		var c int64
		if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM `+quoteIdent(n)).Scan(&c); err != nil {
			t.Fatal(err)
		}
		out[n] = c
	}
	return out
}

// TestSecretCardIDsNeverStored: a card id, or a rejected item's id, that
// carries the password or a token is never stored (ids are stored as
// sent, in columns no scrubber rewrites): the item is quarantined without
// its id, its data redacted, and the rest of the page commits.
func TestSecretCardIDsNeverStored(t *testing.T) {
	const token = "tok-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	secrets := &redact.Secrets{}
	secrets.Add(token)
	w, path, _ := openTest(t, load.Options{Secrets: secrets})
	p := page(1, idRange(1, 3), 1, 5)
	p.Cards = append(p.Cards, load.Card{ID: token, Data: []byte(`{"id":"` + token + `","status":"active"}`)})
	p.Rejected = append(p.Rejected, load.Rejection{Index: 4, CardID: "x" + token[:12], Reason: "id is not an integer", Data: []byte(`{"id":"x` + token[:12] + `"}`)})
	got := commit(t, w, startRun(t, w), p)
	if got.New != 3 || got.Rejected != 2 {
		t.Errorf("commit %+v: want the 3 cards stored and both items quarantined", got)
	}
	if n := queryString(t, w, `SELECT count(*) FROM rejected_cards WHERE card_id IS NULL OR card_id = ''`); n != "2" {
		t.Errorf("%s quarantined items without their id, want 2", n)
	}
	w.Close()
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for k := 0; k+8 <= len(token); k++ {
			if bytes.Contains(b, []byte(token[k:k+8])) {
				t.Fatalf("the warehouse%s holds the token's piece %q", suffix, token[k:k+8])
			}
		}
	}
}
