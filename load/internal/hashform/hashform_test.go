package hashform

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

func TestCanonicalNumber(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"0", "0"}, {"-0", "0"}, {"0.0", "0"}, {"-0.000e-7", "0"}, {"0e99999999999999999999", "0"},
		{"1", "1"}, {"1.0", "1"}, {"1e0", "1"}, {"1E+0", "1"}, {"10e-1", "1"}, {"0.1e1", "1"},
		{"100", "100"}, {"1e2", "100"}, {"1.00e2", "100"}, {"100.000", "100"}, {"1e002", "100"},
		{"1.5", "1.5"}, {"1.50", "1.5"}, {"15e-1", "1.5"}, {"0.15e1", "1.5"}, {"-1.50", "-1.5"},
		{"0.005", "0.005"}, {"5e-3", "0.005"}, {"-5.0E-3", "-0.005"},
		{"12.5e1", "125"}, {"123.456", "123.456"}, {"1234.5600000000002", "1234.5600000000002"},
		{"1e32", "1" + strings.Repeat("0", 32)}, {"1e33", "1e33"}, {"15e38", "15e38"}, {"1.5e40", "15e39"},
		{"1" + strings.Repeat("0", 40), "1e40"},
		{"1e-33", "0." + strings.Repeat("0", 32) + "1"}, {"1e-34", "1e-34"}, {"1e-40", "1e-40"}, {"-12e-50", "-12e-50"},
		{"1e999999", "1e999999"}, {"1e99999999999999999999", "1e99999999999999999999"},
		{"1.5e99999999999999999999", "15e99999999999999999998"},
		{"1e-99999999999999999999", "1e-99999999999999999999"},
	} {
		got, ok := canonicalNumber(nil, []byte(tt.in))
		if !ok || string(got) != tt.want {
			t.Errorf("canonicalNumber(%s) = %s, %v; want %s", tt.in, got, ok, tt.want)
		}
	}
	for _, bad := range []string{"", "-", "01", "1.", ".5", "1e", "1e+", "+1", "1x", "--1", "0x10", "1.2.3"} {
		if got, ok := canonicalNumber(nil, []byte(bad)); ok {
			t.Errorf("canonicalNumber(%q) = %s, want not a number", bad, got)
		}
	}
}

// TestDataHashEqualValues: spellings of one value hash alike, and the
// values they are not hash apart.
func TestDataHashEqualValues(t *testing.T) {
	nfc, nfd := "caf\u00e9", "cafe\u0301"
	same := [][]string{
		{`{"a":1}`, `{"a":1.0}`, `{"a":1e0}`, `{"a":10E-1}`, `{ "a" : 1.000 }`},
		{`{"a":100}`, `{"a":1e2}`, `{"a":1.00E+2}`},
		{`{"a":1.5}`, `{"a":1.50}`, `{"a":15e-1}`},
		{`{"a":0}`, `{"a":-0}`, `{"a":-0.0}`, `{"a":0e10}`},
		{`{"a":"` + nfc + `"}`, `{"a":"` + nfd + `"}`, `{"a":"caf\u00e9"}`, `{"a":"cafe\u0301"}`},
		{`{"` + nfc + `":1,"b":2}`, `{"b":2.0,"` + nfd + `":1}`},
		{`{"a":[1,{"x":"` + nfc + `","y":2.50}],"b":null}`, `{"b": null, "a": [1.0, {"y": 25e-1, "x": "` + nfd + `"}]}`},
		{`{"s":"a\nb/c"}`, `{"s":"a\u000ab\/c"}`},
		{`{"a":1e999999}`, `{"a":10e999998}`, `{"a":0.1e1000000}`},
	}
	for _, group := range same {
		want := Hash([]byte(group[0]))
		for _, doc := range group[1:] {
			if got := Hash([]byte(doc)); !bytes.Equal(got, want) {
				t.Errorf("Hash(%s) = %x, Hash(%s) = %x: want equal", doc, got, group[0], want)
			}
		}
	}
	apart := []string{`{"a":1}`, `{"a":2}`, `{"a":"1"}`, `{"a":1.05}`, `{"a":1.5}`, `{"a":-1}`, `{"a":1e33}`, `{"a":1e32}`,
		`{"a":1e-40}`, `{"a":1e-41}`, `{"a":"cafe"}`, `{"a":"` + nfc + `"}`, `{"b":1}`, `{"a":[1]}`, `{"a":null}`, `{"a":true}`,
		`{"a":1e99999999999999999999}`, `{"a":1e99999999999999999998}`, `{"a":1,"b":1}`, `{"a":"A\u212b"}`}
	seen := map[string]string{}
	for _, doc := range apart {
		h := string(Hash([]byte(doc)))
		if other, dup := seen[h]; dup {
			t.Errorf("Hash(%s) = Hash(%s): want apart", doc, other)
		}
		seen[h] = doc
	}
}

// TestDataHashKeepsCanonicalHash: a document redact wrote in hash form
// (integers, decimals without trailing zeros, NFC text) keeps the hash
// releases before the hash form gave it: the SHA-256 of its text.
func TestDataHashKeepsCanonicalHash(t *testing.T) {
	for _, doc := range []string{
		`{"id":1003,"name":"Card holder 1003","spent":12.5,"tags":["a","b"],"x":null,"y":true,"z":{"k":"` + "caf\u00e9" + `","n":-7}}`,
		`{"a":"tab\there","b":"ctl\u0001","c":0.005,"d":100,"e":1e40}`,
		`[]`, `{}`, `"x"`, `0`,
	} {
		sum := sha256.Sum256([]byte(doc))
		if got := Hash([]byte(doc)); !bytes.Equal(got, sum[:16]) {
			t.Errorf("Hash(%s) = %x, want the hash of its text %x", doc, got, sum[:16])
		}
	}
}

// genValue is a random JSON value of depth at most depth, in its model
// form: numbers as (digits, exponent), strings in NFC.
type genValue struct {
	kind    byte // n(ull) t(rue) f(alse) d(ecimal) s(tring) a(rray) o(bject)
	neg     bool
	digits  string // significant digits, no leading or trailing zeros ("" for 0)
	exp     int
	str     string
	elems   []genValue
	members []genMember
}

type genMember struct {
	key string
	val genValue
}

var genWords = []string{"", "a", "b", "id", "caf\u00e9", "\u00c5ngstr\u00f6m", "\u1e69", "x\ny", "q\"q", "\u4e2d", "Z"}

func genRandom(r *rand.Rand, depth int) genValue {
	k := r.IntN(7)
	if depth <= 0 && k >= 5 {
		k = r.IntN(5)
	}
	switch k {
	case 0:
		return genValue{kind: 'n'}
	case 1:
		return genValue{kind: 't'}
	case 2:
		return genValue{kind: 'f'}
	case 3:
		v := genValue{kind: 'd', neg: r.IntN(2) == 0}
		if r.IntN(6) > 0 {
			n := 1 + r.IntN(6)
			b := make([]byte, n)
			for i := range b {
				b[i] = byte('0' + r.IntN(10))
			}
			b[0] = byte('1' + r.IntN(9))
			b[n-1] = byte('1' + r.IntN(9))
			v.digits, v.exp = string(b), r.IntN(90)-45
		}
		if v.digits == "" {
			v.neg = false
		}
		return v
	case 4:
		return genValue{kind: 's', str: norm.NFC.String(genWords[r.IntN(len(genWords))] + genWords[r.IntN(len(genWords))])}
	case 5:
		v := genValue{kind: 'a'}
		for range r.IntN(4) {
			v.elems = append(v.elems, genRandom(r, depth-1))
		}
		return v
	}
	v := genValue{kind: 'o'}
	used := map[string]bool{}
	for range r.IntN(4) {
		key := norm.NFC.String(genWords[r.IntN(len(genWords))])
		if used[key] {
			continue
		}
		used[key] = true
		v.members = append(v.members, genMember{key, genRandom(r, depth-1)})
	}
	return v
}

// spell writes v as JSON in one of the many spellings of its value: any
// member order and whitespace, numbers with zeros and exponents moved
// around, strings in NFC or NFD, escaped or not.
func (v genValue) spell(r *rand.Rand, b *strings.Builder) {
	ws := func() {
		if r.IntN(4) == 0 {
			b.WriteString([]string{" ", "\n", "\t", "  "}[r.IntN(4)])
		}
	}
	switch v.kind {
	case 'n':
		b.WriteString("null")
	case 't':
		b.WriteString("true")
	case 'f':
		b.WriteString("false")
	case 'd':
		spellNumber(r, b, v)
	case 's':
		spellString(r, b, v.str)
	case 'a':
		b.WriteByte('[')
		for i, e := range v.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			e.spell(r, b)
			ws()
		}
		b.WriteByte(']')
	case 'o':
		b.WriteByte('{')
		for i, k := range r.Perm(len(v.members)) {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			spellString(r, b, v.members[k].key)
			ws()
			b.WriteByte(':')
			ws()
			v.members[k].val.spell(r, b)
		}
		b.WriteByte('}')
	}
}

func spellNumber(r *rand.Rand, b *strings.Builder, v genValue) {
	if v.digits == "" {
		b.WriteString([]string{"0", "-0", "0.0", "-0.00", "0e5", "0E-3"}[r.IntN(6)])
		return
	}
	if v.neg {
		b.WriteByte('-')
	}
	// The value is digits × 10^exp: write it as m × 10^e with the point
	// placed p digits from the mantissa's end and z zeros added after it.
	digits := v.digits + strings.Repeat("0", r.IntN(3))
	exp := v.exp - (len(digits) - len(v.digits))
	p := r.IntN(len(digits) + 1)
	e := exp + p
	mant := digits
	if p > 0 {
		intPart := digits[:len(digits)-p]
		if intPart == "" {
			intPart = "0"
		}
		mant = intPart + "." + digits[len(digits)-p:]
	}
	if e == 0 && r.IntN(2) == 0 {
		b.WriteString(mant)
		return
	}
	b.WriteString(mant)
	b.WriteByte("eE"[r.IntN(2)])
	if e >= 0 && r.IntN(2) == 0 {
		b.WriteByte('+')
	}
	if e < 0 {
		b.WriteByte('-')
		e = -e
	}
	b.WriteString(strings.Repeat("0", r.IntN(2)) + strconv.Itoa(e))
}

func spellString(r *rand.Rand, b *strings.Builder, s string) {
	if r.IntN(2) == 0 {
		s = norm.NFD.String(s)
	}
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c < 0x20:
			fmt.Fprintf(b, `\u%04X`, c)
		case c > 0x7f && r.IntN(3) == 0:
			fmt.Fprintf(b, `\u%04x`, c)
		case c == '/' && r.IntN(2) == 0:
			b.WriteString(`\/`)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
}

// key is v's model as text: equal keys are equal values.
func (v genValue) key() string {
	switch v.kind {
	case 'd':
		if v.digits == "" {
			return "0"
		}
		sign := ""
		if v.neg {
			sign = "-"
		}
		return fmt.Sprintf("%s%se%d", sign, v.digits, v.exp)
	case 's':
		return strconv.Quote(v.str)
	case 'a':
		parts := make([]string, len(v.elems))
		for i, e := range v.elems {
			parts[i] = e.key()
		}
		return "[" + strings.Join(parts, ",") + "]"
	case 'o':
		parts := make([]string, len(v.members))
		for i, m := range v.members {
			parts[i] = strconv.Quote(m.key) + ":" + m.val.key()
		}
		slices.Sort(parts)
		return "{" + strings.Join(parts, ",") + "}"
	}
	return string(v.kind)
}

// TestDataHashProperty: generated re-serialisations of one value hash
// alike; different values hash apart; the hash form is its own hash form.
func TestDataHashProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 4))
	byModel := map[string][]byte{}
	byHash := map[string]string{}
	for i := range 3000 {
		v := genValue{kind: 'o'}
		v.members = genRandom(r, 3).members
		if i%3 == 0 {
			v = genRandom(r, 3)
		}
		var a, b strings.Builder
		v.spell(r, &a)
		v.spell(r, &b)
		ha, hb := Hash([]byte(a.String())), Hash([]byte(b.String()))
		if !bytes.Equal(ha, hb) {
			t.Fatalf("one value, two hashes:\n%s\n%s\nhash forms:\n%s\n%s", a.String(), b.String(), hashForm([]byte(a.String())), hashForm([]byte(b.String())))
		}
		form := hashForm([]byte(a.String()))
		if again := hashForm(form); !bytes.Equal(again, form) {
			t.Fatalf("hash form of %s is %s, whose hash form is %s", a.String(), form, again)
		}
		model := v.key()
		if h, ok := byModel[model]; ok && !bytes.Equal(h, ha) {
			t.Fatalf("value %s hashed two ways", model)
		}
		byModel[model] = ha
		if other, ok := byHash[string(ha)]; ok && other != model {
			t.Fatalf("values %s and %s hash alike", model, other)
		}
		byHash[string(ha)] = model
	}
	// Numbers alone, against exact arithmetic: equal values hash alike.
	for range 3000 {
		v := genRandom(r, 0)
		if v.kind != 'd' {
			continue
		}
		var a strings.Builder
		spellNumber(r, &a, v)
		got, ok := canonicalNumber(nil, []byte(a.String()))
		want := new(big.Rat)
		if _, ok2 := want.SetString(a.String()); !ok || !ok2 {
			t.Fatalf("%s: not read", a.String())
		}
		back, ok3 := new(big.Rat).SetString(string(got))
		if !ok3 || back.Cmp(want) != 0 {
			t.Fatalf("canonicalNumber(%s) = %s: another value", a.String(), got)
		}
	}
}

func BenchmarkDataHash(b *testing.B) {
	doc := []byte(`{"balance":"1234.56","billing_address":{"city":"Springfield","country":"US","line1":"12 Main Street","postal_code":"62701","state":"IL"},"brand":"mastercard","card_number":"524453******1234","created_at":"2024-01-03T10:00:00Z","currency":"USD","expiry":"12/29","id":1003,"is_locked":false,"labels":["ads","travel","team-3"],"limit":{"daily":"1000.00","monthly":"10000.00","per_transaction":"500.00"},"name":"Card holder 1003","notes":null,"revision":1,"spent":1.5,"status":"active","type":"virtual","updated_at":"2025-02-02T08:30:00Z"}`)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		Hash(doc)
	}
}
