package redact

import (
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces every secret and bearer token that Scrub removes.
const Redacted = "[REDACTED]"

// minPiece is the length of the shortest piece of a secret that Scrub
// removes on its own: a token cut short by a server or a truncation still
// loses every 8 bytes it has left.
const minPiece = 8

// minAnywhere is the length of the shortest secret matched wherever it
// appears; shorter ones are matched only as whole words, or a three-letter
// password would eat every word that contains it.
const minAnywhere = 4

// Secrets is a set of secret values (a password, bearer tokens) that Scrub
// removes from text. The zero value is an empty set ready to use. A Secrets
// is safe for concurrent use and must not be copied; it never prints its
// values (String and GoString say how many there are).
type Secrets struct {
	mu sync.RWMutex
	// added counts the distinct values given to Add; values holds every
	// form of them.
	added  map[string]bool
	values map[string]bool
	// whole: values shorter than minAnywhere, matched as whole words.
	whole []string
	// anywhere: values of minAnywhere to minPiece-1 bytes.
	anywhere []string
	// long: values of minPiece bytes or more, found through their pieces.
	long []string
	// pieces maps every minPiece-byte window of a long value (read as a
	// little-endian uint64) to where it occurs; filter holds one bit per
	// hash of those windows, so that most text positions cost one test.
	pieces map[uint64][]piece
	filter [64]uint64
}

// piece is where a window occurs: long[value][off:off+minPiece].
type piece struct{ value, off int32 }

// Add registers v, and the forms it takes once escaped in JSON ("a\/b") or a
// URL ("a%2Fb"), as secrets. Empty values are ignored; values shorter than 4
// bytes are matched only as whole words.
func (s *Secrets) Add(v string) {
	if v == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.added == nil {
		s.added = map[string]bool{}
	}
	s.added[v] = true
	for _, form := range secretForms(v) {
		s.add(form, len(v))
	}
}

// secretForms returns v and the forms it takes when an upstream escapes it.
func secretForms(v string) []string {
	forms := []string{v}
	var j strings.Builder
	for _, r := range v {
		switch r {
		case '"', '\\', '/':
			j.WriteByte('\\')
		}
		j.WriteRune(r)
	}
	for _, f := range []string{
		j.String(),
		strings.ReplaceAll(j.String(), `\/`, "/"),
		url.QueryEscape(v),
		url.PathEscape(v),
	} {
		if !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	return forms
}

// add registers one form of a secret whose original value has n bytes: the
// original's length decides how it is matched.
func (s *Secrets) add(v string, n int) {
	if s.values[v] {
		return
	}
	if s.values == nil {
		s.values = map[string]bool{}
	}
	s.values[v] = true
	switch {
	case n < minAnywhere:
		s.whole = append(s.whole, v)
	case len(v) < minPiece:
		s.anywhere = append(s.anywhere, v)
	default:
		if s.pieces == nil {
			s.pieces = map[uint64][]piece{}
		}
		idx := int32(len(s.long))
		s.long = append(s.long, v)
		for off := 0; off+minPiece <= len(v); off++ {
			x := load64(v, off)
			s.pieces[x] = append(s.pieces[x], piece{idx, int32(off)})
			h := hash64(x)
			s.filter[h>>6] |= 1 << (h & 63)
		}
	}
}

// String returns a summary that names no secret.
func (s *Secrets) String() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return "redact.Secrets{" + itoa(len(s.added)) + " values}"
}

// GoString is String, so that %#v prints no secret either.
func (s *Secrets) GoString() string { return s.String() }

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			return string(b[i:])
		}
	}
}

func load64(s string, off int) uint64 {
	_ = s[off+7]
	return uint64(s[off]) | uint64(s[off+1])<<8 | uint64(s[off+2])<<16 | uint64(s[off+3])<<24 |
		uint64(s[off+4])<<32 | uint64(s[off+5])<<40 | uint64(s[off+6])<<48 | uint64(s[off+7])<<56
}

// hash64 maps a window to one of the 4096 bits of the filter.
func hash64(x uint64) uint64 { return (x * 0x9E3779B97F4A7C15) >> 52 }

// Scrub returns text fit for a log line or an error message:
//
//  1. every registered secret is replaced by "[REDACTED]" wherever it
//     appears, and so is every piece of 8 or more consecutive bytes of a
//     secret (a token cut short by a server or by a truncation);
//  2. the token after "Bearer" (any case, then white space, then
//     [A-Za-z0-9-._~+/]+=*) is replaced by "[REDACTED]", registered or not
//     (with any part of it that step 1 replaced already);
//  3. card numbers are masked (see PANs).
//
// "[REDACTED]" itself is never matched, and the steps are repeated until
// nothing changes, so scrubbing scrubbed text changes nothing. Scrub returns
// text itself when there is nothing to remove.
func (s *Secrets) Scrub(text string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	// Each round that changes something turns at least one byte outside a
	// "[REDACTED]" into part of one, or a digit into '*': the loop ends.
	for {
		t, c1 := s.scrubSecrets(text)
		t, c2 := scrubBearer(t)
		t, c3 := maskString(t)
		if !c1 && !c2 && !c3 {
			return text
		}
		text = t
	}
}

// span is a byte range [start, end) of text to replace.
type span struct{ start, end int }

// scrubSecrets replaces the registered secrets in text (step 1 of Scrub).
// Text inside an existing "[REDACTED]" is never matched: the secrets are
// looked for in the segments between them.
func (s *Secrets) scrubSecrets(text string) (string, bool) {
	return s.replaceSecrets(text, false)
}

// replaceSecrets is scrubSecrets; longOnly looks for the secrets of
// minPiece bytes or more (and their pieces) only.
func (s *Secrets) replaceSecrets(text string, longOnly bool) (string, bool) {
	if len(s.values) == 0 {
		return text, false
	}
	var arr [8]span
	spans := arr[:0]
	for from := 0; from < len(text); {
		end := len(text)
		next := len(text)
		if k := strings.Index(text[from:], Redacted); k >= 0 {
			end = from + k
			next = end + len(Redacted)
		}
		spans = s.find(text, from, end, spans, longOnly)
		from = next
	}
	if len(spans) == 0 {
		return text, false
	}
	return replaceSpans(text, spans), true
}

// find appends to spans the secrets found in text[from:end]; longOnly
// skips the secrets shorter than minPiece.
func (s *Secrets) find(text string, from, end int, spans []span, longOnly bool) []span {
	seg := text[from:end]
	if longOnly {
		return s.findLong(seg, from, spans)
	}
	for _, v := range s.whole {
		for k := 0; k+len(v) <= len(seg); {
			at := strings.Index(seg[k:], v)
			if at < 0 {
				break
			}
			a, b := from+k+at, from+k+at+len(v)
			if wordEdge(text, a, true) && wordEdge(text, b, false) {
				spans = append(spans, span{a, b})
			}
			k += at + 1
		}
	}
	for _, v := range s.anywhere {
		for k := 0; k+len(v) <= len(seg); {
			at := strings.Index(seg[k:], v)
			if at < 0 {
				break
			}
			spans = append(spans, span{from + k + at, from + k + at + len(v)})
			k += at + len(v)
		}
	}
	return s.findLong(seg, from, spans)
}

// findLong appends to spans the secrets of minPiece bytes or more, and
// their pieces, found in seg (which starts at offset from of the text).
func (s *Secrets) findLong(seg string, from int, spans []span) []span {
	if len(s.long) == 0 || len(seg) < minPiece {
		return spans
	}
	// Each match found is extended as far as it goes; the positions it
	// covers on the same diagonal (text offset minus secret offset) would
	// find it again, so they are skipped.
	var diag, until [4]int
	for k := range diag {
		diag[k] = -1 << 62
	}
	for p := 0; p+minPiece <= len(seg); p++ {
		x := load64(seg, p)
		h := hash64(x)
		if s.filter[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		for _, pc := range s.pieces[x] {
			d := p - int(pc.off)
			slot := int(pc.value) % len(diag)
			if diag[slot] == d && p+minPiece <= until[slot] {
				continue
			}
			v := s.long[pc.value]
			a, va := p, int(pc.off)
			for a > 0 && va > 0 && seg[a-1] == v[va-1] {
				a--
				va--
			}
			b, vb := p+minPiece, int(pc.off)+minPiece
			for b < len(seg) && vb < len(v) && seg[b] == v[vb] {
				b++
				vb++
			}
			diag[slot], until[slot] = d, b
			spans = append(spans, span{from + a, from + b})
		}
	}
	return spans
}

// wordEdge reports whether offset i of text is the edge of a word: the
// character before it (before is true) or at it is not a letter or digit.
func wordEdge(text string, i int, before bool) bool {
	var r rune
	if before {
		if i == 0 {
			return true
		}
		r, _ = utf8.DecodeLastRuneInString(text[:i])
	} else {
		if i == len(text) {
			return true
		}
		r, _ = utf8.DecodeRuneInString(text[i:])
	}
	return !unicode.IsLetter(r) && !unicode.IsDigit(r)
}

// replaceSpans replaces every span (merged where they overlap or touch, and
// widened to whole UTF-8 characters) with "[REDACTED]".
func replaceSpans(text string, spans []span) string {
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var out strings.Builder
	out.Grow(len(text) + len(Redacted))
	last := 0
	for k := 0; k < len(spans); {
		a, b := spans[k].start, spans[k].end
		for k++; ; k++ {
			for b < len(text) && !utf8.RuneStart(text[b]) {
				b++
			}
			if k == len(spans) || spans[k].start > b {
				break
			}
			b = max(b, spans[k].end)
		}
		for a > last && !utf8.RuneStart(text[a]) {
			a--
		}
		out.WriteString(text[last:a])
		out.WriteString(Redacted)
		last = b
	}
	out.WriteString(text[last:])
	return out.String()
}

// scrubBearer replaces bearer tokens (step 2 of Scrub). Step 1 may have
// replaced a part of a token already ("Bearer [REDACTED].tail"): the token
// then runs over those markers, and is replaced whole, or its other parts
// would stay. A token that is only markers is left as it is.
func scrubBearer(text string) (string, bool) {
	var out []byte
	last := 0
	for i := 0; i+len("bearer") < len(text); i++ {
		if c := text[i] | 0x20; c != 'b' || !strings.EqualFold(text[i:i+6], "bearer") {
			continue
		}
		j := i + 6
		for j < len(text) && isSpace(text[j]) {
			j++
		}
		if j == i+6 {
			continue
		}
		k, chars := j, false
		for k < len(text) {
			if tokenChar(text[k]) {
				k++
				chars = true
			} else if strings.HasPrefix(text[k:], Redacted) {
				k += len(Redacted)
			} else {
				break
			}
		}
		if !chars {
			continue
		}
		for k < len(text) && text[k] == '=' {
			k++
		}
		if out == nil {
			out = make([]byte, 0, len(text)+len(Redacted))
		}
		out = append(out, text[last:j]...)
		out = append(out, Redacted...)
		last = k
		i = k - 1
	}
	if out == nil {
		return text, false
	}
	return string(append(out, text[last:]...)), true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// tokenChar reports whether c may be part of a bearer token (RFC 6750's
// b64token, without the trailing '=').
func tokenChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
}
