package sqlite

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/cardfield"
)

// TestCardsFlatOddNames: field names that collide case-insensitively,
// cannot be a column (control characters, empty, very long) or cannot be a
// JSON path label (quotes, backslashes) all get a unique column that reads
// the right value.
func TestCardsFlatOddNames(t *testing.T) {
	w, _, _ := openTest(t, load.Options{})
	run := startRun(t, w)
	long := strings.Repeat("k", 300)
	doc := `{"id":1,"status":"a","Status":"B","STATUS":"c","a\u0000b":"nul","":"empty","q\"x":"quote","b\\s":"backslash","t\tz":"tab",` +
		`"` + long + `":"long","` + long + `x":"long2","select":"kw","limit":{"daily":"5.00"},"a.b":"dot","$":"dollar","caf\u00e9":"cr\u00e8me","card_id":"shadow","removed_at":"shadow2"}`
	commit(t, w, run, load.Page{Number: 1, TotalPages: 1, TotalItems: 1, Cards: []load.Card{{ID: "1", Data: []byte(doc)}}})

	columns := map[string]string{} // field name -> column
	rows, err := w.db.QueryContext(t.Context(), `SELECT name, column_name FROM card_fields WHERE in_flat_view = 1`)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for rows.Next() {
		var n, c string
		if err := rows.Scan(&n, &c); err != nil {
			t.Fatal(err)
		}
		if seen[strings.ToLower(c)] {
			t.Errorf("column %q used twice (case-insensitively)", c)
		}
		seen[strings.ToLower(c)] = true
		columns[n] = c
	}
	rows.Close()
	want := map[string]string{
		"status": "a", "Status": "B", "STATUS": "c", "a\x00b": "nul", "": "empty", `q"x`: "quote", `b\s`: "backslash", "t\tz": "tab",
		long: "long", long + "x": "long2", "select": "kw", "limit": `{"daily":"5.00"}`, "a.b": "dot", "$": "dollar", "café": "crème",
		"card_id": "shadow", "removed_at": "shadow2",
	}
	for name, value := range want {
		col, ok := columns[name]
		if !ok {
			t.Errorf("field %q has no column", name)
			continue
		}
		if strings.ContainsRune(col, 0) || col == "" || len(col) > maxColumnName+10 {
			t.Errorf("field %q: column %q is not a usable name", name, col)
		}
		var got sql.NullString
		if err := w.db.QueryRowContext(t.Context(), `SELECT `+quoteIdent(col)+` FROM cards_flat WHERE card_id = '1'`).Scan(&got); err != nil {
			t.Errorf("field %q column %q: %v", name, col, err)
			continue
		}
		if got.String != value {
			t.Errorf("field %q column %q = %q, want %q", name, col, got.String, value)
		}
	}
	if got := queryString(t, w, `SELECT card_id FROM cards_flat`); got != "1" {
		t.Errorf("cards_flat.card_id = %q, want the card's id, not the field named card_id", got)
	}
}

// TestCardsFlatColumnLimit: past MaxFlatFields the view stops growing and
// stays valid; the extra fields are recorded with in_flat_view = 0. A walk
// adds at most MaxNewFieldsPerWalk fields, so three walks of the same card
// record its 2,101.
func TestCardsFlatColumnLimit(t *testing.T) {
	w, _, _ := openTest(t, load.Options{})
	var b strings.Builder
	b.WriteString(`{"id":1`)
	for i := range 2100 {
		fmt.Fprintf(&b, `,"f%04d":%d`, i, i)
	}
	b.WriteString("}")
	var run int64
	for range 3 {
		run = startRun(t, w)
		commit(t, w, run, load.Page{Number: 1, TotalPages: 1, TotalItems: 1, Cards: []load.Card{{ID: "1", Data: []byte(b.String())}}})
		if _, err := finishWalk(t.Context(), w, run, true); err != nil {
			t.Fatal(err)
		}
	}
	if got := queryInt(t, w, `SELECT count(*) FROM card_fields WHERE in_flat_view = 1`); got != cardfield.MaxFlatFields {
		t.Errorf("fields in the view = %d, want %d", got, cardfield.MaxFlatFields)
	}
	if got := queryInt(t, w, `SELECT count(*) FROM card_fields WHERE in_flat_view = 0 AND column_name IS NULL`); got != 2101-cardfield.MaxFlatFields {
		t.Errorf("fields out of the view = %d, want %d", got, 2101-cardfield.MaxFlatFields)
	}
	if got := queryInt(t, w, `SELECT count(*) FROM pragma_table_info('cards_flat')`); got != cardfield.MaxFlatFields+3 {
		t.Errorf("cards_flat has %d columns, want %d", got, cardfield.MaxFlatFields+3)
	}
	// "id" is the first field, so the view ends with f1898.
	if got := queryInt(t, w, `SELECT f1898 FROM cards_flat`); got != 1898 {
		t.Errorf("f1898 = %d", got)
	}
	if got := queryInt(t, w, `SELECT json_extract(data, '$.f2099') FROM cards`); got != 2099 {
		t.Errorf("a field outside the view is not in data: %d", got)
	}
	// More cards and new fields keep committing.
	commit(t, w, run, load.Page{Number: 2, TotalPages: 2, TotalItems: 2, Cards: []load.Card{{ID: "2", Data: []byte(`{"id":2,"late":1}`)}}})
	if got := queryInt(t, w, `SELECT in_flat_view FROM card_fields WHERE name = 'late'`); got != 0 {
		t.Errorf("late field in_flat_view = %d, want 0", got)
	}
}

// TestCanonicalStorageReadsInOldSQLite stores a page written with PHP's
// escapes and reads every key of cards_flat through the system sqlite3 CLI
// (Debian 12 ships 3.40), the tool analysts use. CI sets
// CARDSYNC_REQUIRE_TOOLS=1 so a missing sqlite3 fails instead of skipping.
func TestCanonicalStorageReadsInOldSQLite(t *testing.T) {
	w, path, _ := openTest(t, load.Options{})
	run := startRun(t, w)
	doc := `{"id":7,"caf\u00e9":"cr\u00e8me","url":"https:\/\/example.com\/cards\/7","emoji":"\ud83d\ude00","q\"x":"quote","a\u0000b":"nul","t\tz":"tab","plain":"ok"}`
	commit(t, w, run, load.Page{Number: 1, TotalPages: 1, TotalItems: 1, Cards: []load.Card{{ID: "7", Data: []byte(doc)}}})
	data := queryString(t, w, `SELECT data FROM cards`)
	if strings.Contains(data, `\/`) || strings.Contains(data, `\u00e9`) || strings.Contains(data, `\ud83d`) {
		t.Errorf("data keeps needless escapes: %s", data)
	}
	if !strings.Contains(data, `"café":"crème"`) || !strings.Contains(data, `https://example.com/cards/7`) || !strings.Contains(data, "😀") {
		t.Errorf("data not canonical UTF-8: %s", data)
	}
	w.Close()

	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		if os.Getenv("CARDSYNC_REQUIRE_TOOLS") != "" {
			t.Fatal("sqlite3 CLI not found and CARDSYNC_REQUIRE_TOOLS is set")
		}
		t.Skip("sqlite3 CLI not installed")
	}
	cols := []string{"café", "url", "emoji", `q"x`, "a_b", "t_z", "plain"}
	var sel []string
	for _, c := range cols {
		sel = append(sel, quoteIdent(c))
	}
	out, err := exec.Command(cli, "-readonly", "-separator", "|", "file:"+path+"?mode=ro", "SELECT "+strings.Join(sel, ", ")+" FROM cards_flat").CombinedOutput()
	if err != nil {
		t.Fatalf("sqlite3: %v\n%s", err, out)
	}
	want := "crème|https://example.com/cards/7|😀|quote|nul|tab|ok\n"
	if string(out) != want {
		t.Errorf("sqlite3 %s read %q, want %q", cliVersion(cli), out, want)
	}
}

func cliVersion(cli string) string {
	out, _ := exec.Command(cli, "-version").Output()
	return string(bytes.Fields(out)[0])
}
