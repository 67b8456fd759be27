package contract

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/postgres"
	"github.com/cardsync/cardsync/load/postgres/pgtest"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/redact"
)

// moneyBackend is one warehouse under test with two accounts, alpha and
// beta, each opened with its own options (two cardsync configurations
// writing one warehouse), and a way to open alpha again (reopen).
type moneyBackend struct {
	name        string
	alpha, beta store
	query       func(t testing.TB, q string) []string
	// reopen closes both and opens alpha again with its options (the
	// migrations run), returning the new store and query.
	reopen func(t *testing.T) (store, func(t testing.TB, q string) []string)
}

// moneyBackends returns an SQLite file and a PostgreSQL database, each
// with accounts alpha and beta opened with the options given.
func moneyBackends(t *testing.T, alpha, beta load.Options) []moneyBackend {
	t.Helper()
	alpha.Account, beta.Account = "alpha", "beta"
	var out []moneyBackend
	{
		path := filepath.Join(t.TempDir(), "w.db")
		open := func(o load.Options) *sqlite.Warehouse {
			w, err := sqlite.Open(t.Context(), path, o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() })
			return w
		}
		a, b := open(alpha), open(beta)
		out = append(out, moneyBackend{name: "sqlite", alpha: a, beta: b,
			query: func(t testing.TB, q string) []string { t.Helper(); return sqliteTexts(t, a.DB(), q) },
			reopen: func(t *testing.T) (store, func(t testing.TB, q string) []string) {
				a.Close()
				b.Close()
				w := open(alpha)
				return w, func(t testing.TB, q string) []string { t.Helper(); return sqliteTexts(t, w.DB(), q) }
			}})
	}
	if server != nil {
		a, url, clk := openPG(t, postgres.Options{Common: alpha})
		beta.Now = clk.Now
		b, err := postgres.Open(t.Context(), url, postgres.Options{Common: beta})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		out = append(out, moneyBackend{name: "postgres", alpha: a, beta: b,
			query: func(t testing.TB, q string) []string { t.Helper(); return pgQuery(t, a, q) },
			reopen: func(t *testing.T) (store, func(t testing.TB, q string) []string) {
				a.Close()
				b.Close()
				o := alpha
				o.Now = clk.Now
				w, err := postgres.Open(t.Context(), url, postgres.Options{Common: o})
				if err != nil {
					t.Fatalf("reopen: %v", err)
				}
				t.Cleanup(func() { w.Close() })
				return w, func(t testing.TB, q string) []string { t.Helper(); return pgQuery(t, w, q) }
			}})
	} else if os.Getenv(pgtest.EnvRequire) != "" {
		t.Fatal(pgtest.ErrNoServer)
	}
	return out
}

// cardsPage is a page of cards, each {"id":…} and the members members(id)
// gives (JSON text after the id).
func cardsPage(ids []int, members func(id int) string) load.Page {
	p := load.Page{Stream: load.StreamCards, Number: 1, TotalPages: 1, TotalItems: len(ids)}
	for _, id := range ids {
		p.Cards = append(p.Cards, load.Card{ID: strconv.Itoa(id), Data: fmt.Appendf(nil, `{"id":%d%s}`, id, members(id))})
	}
	return p
}

// noisyBalance is card id's balance: 1007.01, 2014.01, … (every card
// worth 92.23 or more), in USD on odd cards and without a currency on the
// others.
func noisyBalance(id int) string {
	cur := ""
	if id%2 == 1 {
		cur = `,"currency":"USD"`
	}
	return fmt.Sprintf(`,"balance":"%d.01"%s`, 1007*id, cur)
}

// TestCardMoneyNoisyAmount is issue 34's case: 15 cards with balances
// from 1007.01, then one card sends 0.30000000000000004 (PHP's 0.1 + 0.2).
// Every card's balance_minor stays exact at scale 2 (count 15), the noisy
// value is held rounded (30) and marked (card_fields.rounded,
// cards.amounts_rounded); back to "15.00" it reads 1500, unmarked, and the
// scale never moved. The other account of the warehouse, sent the same
// noise, changes nothing of the first's.
func TestCardMoneyNoisyAmount(t *testing.T) {
	for _, b := range moneyBackends(t, load.Options{}, load.Options{}) {
		t.Run(b.name, func(t *testing.T) {
			field := func() string {
				return one(t, b.query(t, `SELECT type || ':' || scale || ':' || minor_column || ':' || conflicts || ':' || rounded FROM card_fields WHERE name = 'balance'`))
			}
			alphaCards := func() string {
				return joined(b.query(t, `SELECT c.card_id || '=' || coalesce(CAST(f.balance_minor AS TEXT), 'NULL') || '/' || c.amount_scale || '/' || c.amounts_rounded
					FROM cards c JOIN cards_flat f ON f.account = c.account AND f.card_id = c.card_id WHERE c.account = 'alpha' ORDER BY length(c.card_id), c.card_id`))
			}
			exact := func(noisy map[int]string) string {
				var parts []string
				for id := 1; id <= 15; id++ {
					v, ok := noisy[id]
					if !ok {
						v = fmt.Sprintf("%d01/2/0", 1007*id)
					}
					parts = append(parts, fmt.Sprintf("%d=%s", id, v))
				}
				return strings.Join(parts, ",")
			}
			run := startRun(t, b.alpha)
			commit(t, b.alpha, run, cardsPage(idRange(1, 15), noisyBalance))
			if got, want := alphaCards(), exact(nil); got != want {
				t.Fatalf("the first walk:\n%s\nwant\n%s", got, want)
			}
			noise := func(id int) string {
				if id == 3 {
					return `,"balance":0.30000000000000004,"currency":"USD"`
				}
				return noisyBalance(id)
			}
			if c := commit(t, b.alpha, run, cardsPage(idRange(1, 15), noise)); c.Changed != 1 {
				t.Fatalf("the noisy commit: %+v, want 1 changed", c)
			}
			if got, want := field(), "decimal:2:balance_minor:0:1"; got != want {
				t.Errorf("after the noise, card_fields' balance: %s, want %s", got, want)
			}
			if got, want := alphaCards(), exact(map[int]string{3: "30/2/1"}); got != want {
				t.Errorf("after the noise:\n%s\nwant\n%s", got, want)
			}
			if got := one(t, b.query(t, `SELECT count(balance_minor) FROM cards_flat`)); got != "15" {
				t.Errorf("count(balance_minor) = %s, want 15", got)
			}
			// The other account, sent the same noise.
			brun := startRun(t, b.beta)
			commit(t, b.beta, brun, cardsPage(idRange(1, 15), noise))
			if got, want := field(), "decimal:2:balance_minor:0:2"; got != want {
				t.Errorf("after beta's noise, card_fields' balance: %s, want %s", got, want)
			}
			if got, want := joined(b.query(t, `SELECT account || '=' || count(balance_minor) || '/' || CAST(sum(balance_minor) AS TEXT) FROM cards_flat GROUP BY account ORDER BY account`)),
				// 1007 × (1+…+15) + 15 × 0.01, in cents, less card 3's 3021.01,
				// plus 0.30.
				fmt.Sprintf("alpha=15/%d,beta=15/%d", 100700*120+15-302101+30, 100700*120+15-302101+30); got != want {
				t.Errorf("per account: %s, want %s", got, want)
			}
			// Back to "15.00".
			back := func(id int) string {
				if id == 3 {
					return `,"balance":"15.00","currency":"USD"`
				}
				return noisyBalance(id)
			}
			commit(t, b.alpha, run, cardsPage(idRange(1, 15), back))
			if got, want := alphaCards(), exact(map[int]string{3: "1500/2/0"}); got != want {
				t.Errorf("back to 15.00:\n%s\nwant\n%s", got, want)
			}
			// rounded counts the values written rounded: the two stay.
			if got, want := field(), "decimal:2:balance_minor:0:2"; got != want {
				t.Errorf("back to 15.00, card_fields' balance: %s, want %s", got, want)
			}
		})
	}
}

// TestCardMoneyCurrencyScale: each card's minor units are at the minor
// unit of its own currency (ISO 4217, the field found by its name in any
// case), else at [cards] amount_scale (3 here, card_fields.scale too),
// which an unknown code also gets; more decimals are rounded half to even
// and marked; beyond int64 minor units at the card's scale is a conflict
// (NULL), whatever fits at another scale.
func TestCardMoneyCurrencyScale(t *testing.T) {
	three := 3
	cards := []string{
		1:  `"currency":"USD","balance":"1234.5678"`,
		2:  `"currency":"JPY","balance":"1234.5678"`,
		3:  `"currency":"KWD","balance":"1234.5678"`,
		4:  `"currency":"CLF","balance":"1234.5678"`,
		5:  `"currency":"usd","balance":"1234.5"`,
		6:  `"currency":"XYZ","balance":"1234.5678"`,
		7:  `"balance":"1234.5678"`,
		8:  `"currency_code":"JPY","balance":"1234.00"`,
		9:  `"billing_currency":"KWD","balance":1234.0005`,
		10: `"currency":"KWD","balance":"9223372036854775.807"`,
		11: `"currency":"KWD","balance":"9223372036854775.808"`,
		12: `"currency":"JPY","balance":"9223372036854775807.4"`,
		13: `"currency":"USD","balance":"92233720368547758.08"`,
		14: `"currency":"JPY","balance":"-2.5"`,
	}
	want := "1=123457/2/USD/1,2=1235/0/JPY/1,3=1234568/3/KWD/1,4=12345678/4/CLF/0,5=123450/2/USD/0,6=1234568/3/NULL/1," +
		"7=1234568/3/NULL/1,8=1234/0/JPY/0,9=1234000/3/KWD/1,10=9223372036854775807/3/KWD/0,11=NULL/3/KWD/0," +
		"12=9223372036854775807/0/JPY/1,13=NULL/2/USD/0,14=-2/0/JPY/1"
	for _, b := range moneyBackends(t, load.Options{AmountScale: &three}, load.Options{}) {
		t.Run(b.name, func(t *testing.T) {
			run := startRun(t, b.alpha)
			commit(t, b.alpha, run, cardsPage(idRange(1, len(cards)-1), func(id int) string { return "," + cards[id] }))
			got := joined(b.query(t, `SELECT c.card_id || '=' || coalesce(CAST(f.balance_minor AS TEXT), 'NULL') || '/' || c.amount_scale || '/' ||
					coalesce(c.amount_currency, 'NULL') || '/' || c.amounts_rounded
				FROM cards_current c JOIN cards_flat f ON f.account = c.account AND f.card_id = c.card_id ORDER BY length(c.card_id), c.card_id`))
			if got != want {
				t.Errorf("cards:\n%s\nwant\n%s", got, want)
			}
			if got, want := one(t, b.query(t, `SELECT type || ':' || scale || ':' || conflicts || ':' || rounded FROM card_fields WHERE name = 'balance'`)), "decimal:3:2:8"; got != want {
				t.Errorf("card_fields' balance: %s, want %s", got, want)
			}
		})
	}
}

// TestCardMoneyAccounts: two accounts of one warehouse whose
// configurations differ ([cards] amount_scale 2 and 4) each hold their
// cards without a currency at their own scale, a card naming one at the
// currency's; the widening of an integer field by one account's decimal
// recomputes every card of both at the scale each card has.
func TestCardMoneyAccounts(t *testing.T) {
	four := 4
	for _, b := range moneyBackends(t, load.Options{}, load.Options{AmountScale: &four}) {
		t.Run(b.name, func(t *testing.T) {
			members := func(id int) string {
				cur := ""
				if id == 3 {
					cur = `,"currency":"JPY"`
				}
				return fmt.Sprintf(`,"balance":"1.23456","fee":%d%s`, id, cur)
			}
			commit(t, b.alpha, startRun(t, b.alpha), cardsPage(idRange(1, 3), members))
			brun := startRun(t, b.beta)
			commit(t, b.beta, brun, cardsPage(idRange(1, 3), members))
			state := func() string {
				return joined(b.query(t, `SELECT f.account || '/' || f.card_id || '=' || coalesce(CAST(f.balance_minor AS TEXT), 'NULL') || ':' ||
						coalesce(CAST(f.fee_minor AS TEXT), 'NULL') || '@' || c.amount_scale
					FROM cards_flat f JOIN cards c ON c.account = f.account AND c.card_id = f.card_id ORDER BY f.account, f.card_id`))
			}
			if got := one(t, b.query(t, `SELECT type FROM card_fields WHERE name = 'fee'`)); got != "integer" {
				t.Fatalf("fee is %s, want integer", got)
			}
			// beta's decimal fee widens fee: every card's fee minor units, at
			// the card's own scale.
			p := cardsPage([]int{4}, func(int) string { return `,"balance":"0.5","fee":"0.125"` })
			commit(t, b.beta, brun, p)
			want := "alpha/1=123:100@2,alpha/2=123:200@2,alpha/3=1:3@0," +
				"beta/1=12346:10000@4,beta/2=12346:20000@4,beta/3=1:3@0,beta/4=5000:1250@4"
			if got := state(); got != want {
				t.Errorf("after the widening:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestCardMoneyUpgrade: a warehouse whose balance scale grew to 17 under
// the old rule (card_fields.scale 17, balance_minor NULL for every card
// worth 92.23 or more) is recomputed by the upgrade: scale 2, every card's
// minor units exact, the noisy value rounded and marked, the conflicts
// recounted.
func TestCardMoneyUpgrade(t *testing.T) {
	for _, b := range moneyBackends(t, load.Options{}, load.Options{}) {
		t.Run(b.name, func(t *testing.T) {
			noise := func(id int) string {
				if id == 3 {
					return `,"balance":0.30000000000000004`
				}
				return noisyBalance(id)
			}
			commit(t, b.alpha, startRun(t, b.alpha), cardsPage(idRange(1, 15), noise))
			// The warehouse as the old rule left it.
			undo := []string{
				`UPDATE card_fields SET scale = 17, conflicts = 14 WHERE name = 'balance'`,
				`UPDATE card_state SET minor = NULL WHERE card_id <> '3'`,
				`DROP VIEW cards_current`,
				`DROP VIEW cards`,
				`ALTER TABLE card_state DROP COLUMN amount_scale`,
				`ALTER TABLE card_state DROP COLUMN amount_currency`,
				`ALTER TABLE card_state DROP COLUMN amounts_rounded`,
				`ALTER TABLE card_fields DROP COLUMN rounded`,
			}
			if b.name == "sqlite" {
				undo = append(undo, `UPDATE card_state SET minor = '{"balance":30000000000000004}' WHERE card_id = '3'`,
					`ALTER TABLE walk_seen DROP COLUMN hashes`, `PRAGMA user_version = 16`)
			} else {
				undo = append(undo, `UPDATE card_state SET minor = '{"balance":30000000000000004}'::jsonb WHERE card_id = '3'`,
					`DELETE FROM schema_migrations WHERE version IN (14, 15)`)
			}
			for _, q := range undo {
				b.query(t, q)
			}
			_, query := b.reopen(t)
			if got, want := one(t, query(t, `SELECT type || ':' || scale || ':' || conflicts || ':' || rounded FROM card_fields WHERE name = 'balance'`)), "decimal:2:0:1"; got != want {
				t.Errorf("card_fields' balance after the upgrade: %s, want %s", got, want)
			}
			got := joined(query(t, `SELECT c.card_id || '=' || coalesce(CAST(f.balance_minor AS TEXT), 'NULL') || '/' || c.amount_scale || '/' || c.amounts_rounded
				FROM cards c JOIN cards_flat f ON f.account = c.account AND f.card_id = c.card_id ORDER BY length(c.card_id), c.card_id`))
			var want []string
			for id := 1; id <= 15; id++ {
				v := fmt.Sprintf("%d01/2/0", 1007*id)
				if id == 3 {
					v = "30/2/1"
				}
				want = append(want, fmt.Sprintf("%d=%s", id, v))
			}
			if got != strings.Join(want, ",") {
				t.Errorf("after the upgrade:\n%s\nwant\n%s", got, strings.Join(want, ","))
			}
		})
	}
}

// halfEvenText is the oracle of TestCardMoneyProperty: the decimal text
// s times 10^scale rounded half to even with math/big's exact rationals,
// "NULL" when beyond int64.
func halfEvenText(s string, scale int) string {
	x, ok := new(big.Rat).SetString(s)
	if !ok {
		return "NULL"
	}
	x.Mul(x, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	q, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	twice := new(big.Int).Abs(new(big.Int).Lsh(m, 1))
	if c := twice.Cmp(x.Denom()); c > 0 || c == 0 && q.Bit(0) == 1 {
		q.Add(q, big.NewInt(int64(x.Sign())))
	}
	if !q.IsInt64() {
		return "NULL"
	}
	return q.String()
}

// TestCardMoneyProperty: for generated decimal texts (strings and JSON
// numbers, up to 22 decimals, float noise among them) on cards of
// generated currencies, balance_minor is the exact half-to-even rounding
// at the card's currency's scale (NULL beyond int64), in both warehouses;
// and it never depends on the other cards: a second commit gives the
// other cards new, noisier values and every unchanged card reads the
// same.
func TestCardMoneyProperty(t *testing.T) {
	currencies := []struct {
		member string
		scale  int
	}{{`,"currency":"USD"`, 2}, {`,"currency":"JPY"`, 0}, {`,"currency":"KWD"`, 3}, {`,"currency":"CLF"`, 4}, {``, 2}, {`,"currency":"XYZ"`, 2}}
	r := rand.New(rand.NewPCG(34, 2))
	// Only values the rules store as sent: a long digit run may be
	// masked as a card number, and a masked balance is no number.
	policy := redact.NewPolicy(nil)
	asSent := func(v string) bool {
		doc := `{"balance":` + v + `}`
		out, _, err := policy.JSON([]byte(doc))
		return err == nil && string(out) == doc
	}
	gen := func() string {
		var b strings.Builder
		if r.IntN(4) == 0 {
			b.WriteByte('-')
		}
		b.WriteString(strconv.FormatInt(r.Int64N(1_000_000_000_000), 10))
		if n := r.IntN(23); n > 0 {
			b.WriteByte('.')
			for range n {
				b.WriteByte(byte('0' + r.IntN(10)))
			}
		}
		if r.IntN(2) == 0 {
			return `"` + b.String() + `"`
		}
		return b.String()
	}
	const n = 120
	first, second, curs := make([]string, n+1), make([]string, n+1), make([]int, n+1)
	for id := 1; id <= n; id++ {
		for first[id] = gen(); !asSent(first[id]); first[id] = gen() {
		}
		curs[id] = r.IntN(len(currencies))
	}
	// The even cards get new values, noisier ones among them; the odd
	// cards keep theirs.
	copy(second, first)
	for id := 2; id <= n; id += 2 {
		second[id] = first[id]
		for range 20 {
			v := strings.Trim(first[id], `"`)
			if !strings.Contains(v, ".") {
				v += ".0000000000000000"
			}
			v += strconv.Itoa(1 + r.IntN(9))
			if first[id][0] == '"' {
				v = `"` + v + `"`
			}
			if asSent(v) {
				second[id] = v
				break
			}
		}
	}
	for _, b := range moneyBackends(t, load.Options{}, load.Options{}) {
		t.Run(b.name, func(t *testing.T) {
			values := slices.Clone(first)
			members := func(id int) string { return `,"balance":` + values[id] + currencies[curs[id]].member }
			check := func(when string, ids []int) {
				t.Helper()
				got := b.query(t, `SELECT card_id || '=' || coalesce(CAST(balance_minor AS TEXT), 'NULL') FROM cards_flat ORDER BY length(card_id), card_id`)
				for _, id := range ids {
					want := fmt.Sprintf("%d=%s", id, halfEvenText(strings.Trim(values[id], `"`), currencies[curs[id]].scale))
					if got[id-1] != want {
						t.Errorf("%s: card %d (%s%s): %s, want %s", when, id, values[id], currencies[curs[id]].member, got[id-1], want)
					}
				}
			}
			run := startRun(t, b.alpha)
			commit(t, b.alpha, run, cardsPage(idRange(1, n), members))
			check("first commit", idRange(1, n))
			values = slices.Clone(second)
			commit(t, b.alpha, run, cardsPage(idRange(1, n), members))
			check("second commit", idRange(1, n))
		})
	}
}
