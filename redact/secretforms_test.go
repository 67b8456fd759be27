package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// The encoders below are written apart from secretforms.go, from what each
// library does, so that the tests check the spellings rather than repeat
// them.

// goJSON is encoding/json's spelling of the content of a string.
func goJSON(s string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// PHP's json_encode flags.
const (
	phpHexTag = 1 << iota
	phpHexAmp
	phpHexApos
	phpHexQuot
	phpUnescapedSlashes
	phpUnescapedUnicode
)

// phpJSON is PHP's json_encode of a string, without its quotes.
func phpJSON(s string, flags int) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' && flags&phpHexQuot != 0:
			b.WriteString(`\u0022`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '/' && flags&phpUnescapedSlashes == 0:
			b.WriteString(`\/`)
		case r == '<' && flags&phpHexTag != 0:
			b.WriteString(`\u003C`)
		case r == '>' && flags&phpHexTag != 0:
			b.WriteString(`\u003E`)
		case r == '&' && flags&phpHexAmp != 0:
			b.WriteString(`\u0026`)
		case r == '\'' && flags&phpHexApos != 0:
			b.WriteString(`\u0027`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r >= 0x80 && (flags&phpUnescapedUnicode == 0 || r == 0x2028 || r == 0x2029):
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04x`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// dotnetJSON is System.Text.Json's default escaping (JavaScriptEncoder.Default).
func dotnetJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r >= 0x20 && r < 0x7f && !strings.ContainsRune("\"&'+<>`", r):
			b.WriteRune(r)
		default:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04X`, u)
			}
		}
	}
	return b.String()
}

// numericRefs writes every character but ASCII letters and digits as an
// HTML numeric reference.
func numericRefs(s string, format string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf && isAlnum(byte(r)) {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, format, r)
		}
	}
	return b.String()
}

// encoded is a text holding a secret's spelling: text[off:off+n] is the part
// that depends on the secret alone.
type encoded struct {
	text   string
	off, n int
	hex    bool // a layer is hex: pieces of minHexPiece count
	layers []string
}

// textLayer applies a per-character encoding to e.
func (e encoded) textLayer(name string, enc func(string) string) encoded {
	pre := enc(e.text[:e.off])
	mid := enc(e.text[e.off : e.off+e.n])
	post := enc(e.text[e.off+e.n:])
	return encoded{pre + mid + post, len(pre), len(mid), e.hex, append(e.layers[:len(e.layers):len(e.layers)], name)}
}

// binaryLayer encodes e in base64 or hex after 0 to 2 random bytes and
// before 0 to 3: of the output, the characters whose bits all come from the
// secret's part are the new part.
func (e encoded) binaryLayer(rng *rand.Rand) encoded {
	pre := randBytes(rng, rng.IntN(3))
	post := randBytes(rng, rng.IntN(4))
	in := string(pre) + e.text + string(post)
	a, b := len(pre)+e.off, len(pre)+e.off+e.n
	encs := []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding}
	switch k := rng.IntN(6); k {
	case 4, 5:
		out := hex.EncodeToString([]byte(in))
		if k == 5 {
			out = strings.ToUpper(out)
		}
		return encoded{out, 2 * a, 2 * (b - a), true, append(e.layers[:len(e.layers):len(e.layers)], fmt.Sprintf("hex%d+%d", k, len(pre)))}
	default:
		out := encs[k].EncodeToString([]byte(in))
		from, to := (8*a+5)/6, 8*b/6
		return encoded{out, from, max(0, to-from), e.hex, append(e.layers[:len(e.layers):len(e.layers)], fmt.Sprintf("base64-%d+%d", k, len(pre)))}
	}
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for k := range b {
		b[k] = byte(rng.IntN(256))
	}
	return b
}

// textEncoders are the per-character encodings of the property test; deep
// is false for those tried one layer deep only.
var textEncoders = []struct {
	name string
	deep bool
	enc  func(rng *rand.Rand) func(string) string
}{
	{"go-json", true, func(*rand.Rand) func(string) string { return func(s string) string { return goJSON(s, true) } }},
	{"go-json-nohtml", true, func(*rand.Rand) func(string) string { return func(s string) string { return goJSON(s, false) } }},
	{"php-json-common", true, func(rng *rand.Rand) func(string) string {
		flags := []int{0, phpHexTag | phpHexAmp, phpHexTag | phpHexAmp | phpHexApos | phpHexQuot}[rng.IntN(3)]
		return func(s string) string { return phpJSON(s, flags) }
	}},
	{"php-json-any-flags", false, func(rng *rand.Rand) func(string) string {
		flags := rng.IntN(64)
		return func(s string) string { return phpJSON(s, flags) }
	}},
	{"dotnet-json", true, func(*rand.Rand) func(string) string { return dotnetJSON }},
	{"html", true, func(*rand.Rand) func(string) string { return html.EscapeString }},
	{"html-numeric", true, func(rng *rand.Rand) func(string) string {
		format := []string{"&#%d;", "&#x%x;", "&#x%X;"}[rng.IntN(3)]
		return func(s string) string { return numericRefs(s, format) }
	}},
	{"query", true, func(*rand.Rand) func(string) string { return url.QueryEscape }},
	{"path", true, func(*rand.Rand) func(string) string { return url.PathEscape }},
}

// randomEncoding spells secret in one or two layers (at most one of them
// base64 or hex); a pair may be sent as a Basic header instead.
func randomEncoding(rng *rand.Rand, secret string, pair bool) encoded {
	e := encoded{text: secret, n: len(secret)}
	if pair && rng.IntN(3) == 0 {
		e = e.binaryLayerStd()
		return e
	}
	depth := 1 + rng.IntN(2)
	binary := false
	for range depth {
		if !binary && rng.IntN(3) == 0 {
			e = e.binaryLayer(rng)
			binary = true
			continue
		}
		for {
			te := textEncoders[rng.IntN(len(textEncoders))]
			if depth == 2 && !te.deep {
				continue
			}
			e = e.textLayer(te.name, te.enc(rng))
			break
		}
	}
	return e
}

// binaryLayerStd is the Authorization header of HTTP Basic.
func (e encoded) binaryLayerStd() encoded {
	const head = "Authorization: Basic "
	out := base64.StdEncoding.EncodeToString([]byte(e.text))
	return encoded{head + out, len(head), 8 * len(e.text) / 6, false, []string{"basic"}}
}

// randomSecret draws a password (4 to 40 characters from letters, digits,
// the punctuation escaping styles rewrite and non-ASCII letters) or a token
// (JWT-like, base64url, hex).
func randomPassword(rng *rand.Rand) string {
	const ascii = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	const punct = "\"\\/&<>'+=% !#$()*,:;?@[]^`{|}~-._"
	other := []rune("éßñøжΩ中文한😀\u2028")
	var b strings.Builder
	n := 4 + rng.IntN(37)
	mix := rng.IntN(3) // how much punctuation
	for b.Len() < n {
		switch k := rng.IntN(10); {
		case k < 2+2*mix:
			b.WriteByte(punct[rng.IntN(len(punct))])
		case k == 9:
			b.WriteRune(other[rng.IntN(len(other))])
		default:
			b.WriteByte(ascii[rng.IntN(len(ascii))])
		}
	}
	return b.String()
}

func randomToken(rng *rand.Rand) string {
	switch rng.IntN(3) {
	case 0:
		part := func(n int) string { return base64.RawURLEncoding.EncodeToString(randBytes(rng, n)) }
		return part(12+rng.IntN(20)) + "." + part(20+rng.IntN(60)) + "." + part(32)
	case 1:
		return base64.RawURLEncoding.EncodeToString(randBytes(rng, 15+rng.IntN(30)))
	default:
		return hex.EncodeToString(randBytes(rng, 16+rng.IntN(17)))
	}
}

// randomText is ordinary text around a secret: letters, spaces, a little
// punctuation.
func randomText(rng *rand.Rand) string {
	const chars = "abcdefghijklmnopqrstuvwxyz      ABCDEFGHIJKLM.,:;-()"
	b := make([]byte, rng.IntN(40))
	for k := range b {
		b[k] = chars[rng.IntN(len(chars))]
	}
	return string(b)
}

// checkGone fails if out holds a piece of the secret's part of e (pieces of
// minPiece bytes, minHexPiece through hex, the whole part for a value
// shorter than minPiece), or a piece of minPiece bytes of the secret itself,
// as it is or once decoded.
func checkGone(t *testing.T, seed uint64, what, secret string, e encoded, in, out string) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d, %s %q through %v:\n in  %q\n out %q\n"+format, append([]any{seed, what, secret, e.layers, in, out}, args...)...)
	}
	part := e.text[e.off : e.off+e.n]
	m := minPiece
	if e.hex {
		m = minHexPiece
	}
	if len(secret) < minPiece || len(part) < m {
		m = len(part)
	}
	for k := 0; m > 0 && k+m <= len(part); k++ {
		if strings.Contains(out, part[k:k+m]) {
			fail("holds %q of the spelling %q", part[k:k+m], part)
		}
	}
	if len(secret) < minPiece {
		return
	}
	for _, d := range decodings(out) {
		for k := 0; k+minPiece <= len(secret); k++ {
			if strings.Contains(d, secret[k:k+minPiece]) {
				fail("decodes to %q, which holds %q", d, secret[k:k+minPiece])
			}
		}
	}
}

// decodings returns s and what it gives once or twice decoded as JSON
// escapes, HTML references, percent-encoding, and runs of base64 or hex
// characters.
func decodings(s string) []string {
	one := append([]string{s}, decodeOnce(s)...)
	all := one
	for _, d := range one[1:] {
		all = append(all, decodeOnce(d)...)
	}
	return all
}

func decodeOnce(s string) []string {
	out := []string{html.UnescapeString(s), unescapeJSONLoose(s)}
	if u, err := url.QueryUnescape(s); err == nil {
		out = append(out, u)
	}
	if u, err := url.PathUnescape(s); err == nil {
		out = append(out, u)
	}
	var runs []string
	isB64 := func(c byte) bool { return isAlnum(c) || c == '+' || c == '/' || c == '-' || c == '_' }
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && isB64(s[j]) {
			j++
		}
		if j-i >= 8 {
			runs = append(runs, s[i:j])
		}
		i = j + 1
	}
	for _, r := range runs {
		std := strings.NewReplacer("-", "+", "_", "/").Replace(r)
		for o := range 4 {
			x := std[o:]
			if len(x)%4 == 1 {
				x = x[:len(x)-1]
			}
			if b, err := base64.RawStdEncoding.DecodeString(x); err == nil {
				out = append(out, string(b))
			}
		}
		for o := range 2 {
			x := r[o:]
			x = x[:len(x)/2*2]
			if b, err := hex.DecodeString(x); err == nil {
				out = append(out, string(b))
			}
		}
	}
	return out
}

// unescapeJSONLoose decodes the JSON escapes in s and keeps whatever else.
func unescapeJSONLoose(s string) string {
	var b strings.Builder
	var units []uint16
	flush := func() {
		if len(units) > 0 {
			b.WriteString(string(utf16.Decode(units)))
			units = units[:0]
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+5 < len(s) && s[i+1] == 'u' {
			var u uint16
			if _, err := fmt.Sscanf(s[i+2:i+6], "%04x", &u); err == nil {
				units = append(units, u)
				i += 5
				continue
			}
		}
		flush()
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch c := s[i]; c {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			default:
				b.WriteByte(c)
			}
			continue
		}
		b.WriteByte(s[i])
	}
	flush()
	return b.String()
}

// account is what a client registers: a password, the pair with its
// email, and a token.
type account struct {
	email, password, token string
	secrets                *Secrets
	policy                 *Policy
}

func newAccount(rng *rand.Rand) *account {
	a := &account{
		email:    fmt.Sprintf("user%d@example.com", rng.IntN(1000)),
		password: randomPassword(rng),
		token:    randomToken(rng),
		secrets:  &Secrets{},
	}
	a.secrets.Add(a.password)
	a.secrets.AddPair(a.email, a.password)
	a.secrets.Add(a.token)
	a.policy = NewSecretPolicy(nil, a.secrets)
	return a
}

// TestSecretSpellings is the property: a password, a pair or a token,
// spelled by a randomly chosen encoder (one or two layers deep) and
// embedded in random text, leaves no piece of its spelling nor of itself,
// as it is or decoded, in what Scrub or Policy.JSON return, and the policy
// counts it.
func TestSecretSpellings(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 33))
	accounts := make([]*account, 60)
	for k := range accounts {
		accounts[k] = newAccount(rng)
	}
	cases := 3000
	if testing.Short() || raceEnabled {
		cases = 500
	}
	for range cases {
		a := accounts[rng.IntN(len(accounts))]
		secret, pair := a.password, false
		switch rng.IntN(4) {
		case 0:
			secret, pair = a.email+":"+a.password, true
		case 1:
			secret = a.token
		}
		e := randomEncoding(rng, secret, pair)
		pre := randomText(rng)
		text := pre + e.text + randomText(rng)
		e.text, e.off = text, e.off+len(pre)
		out := a.secrets.Scrub(text)
		checkGone(t, seed, "Scrub", secret, e, text, out)
		if again := a.secrets.Scrub(out); again != out {
			t.Fatalf("seed %d: Scrub(%q) = %q, want it unchanged", seed, out, again)
		}
		if len(secret) < minPiece {
			continue // data keeps a short secret but as a whole value
		}
		doc, _ := json.Marshal(map[string]string{"note": text})
		got, _, n, err := a.policy.JSONCount(doc)
		if err != nil {
			t.Fatalf("seed %d: JSON: %v", seed, err)
		}
		var note struct{ Note string }
		if err := json.Unmarshal(got, &note); err != nil {
			t.Fatalf("seed %d: JSON gave %q: %v", seed, got, err)
		}
		checkGone(t, seed, "Policy.JSON", secret, e, text, note.Note)
		// The policy masks card numbers first: hex digits can make one, and
		// then no secret is left to count.
		if want := b2i(strings.Contains(note.Note, Redacted)); n != want {
			t.Fatalf("seed %d: JSONCount(%s) counts %d secrets, want %d", seed, doc, n, want)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
