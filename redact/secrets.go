package redact

import (
	"slices"
	"sync"
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
	// added counts the distinct values given to Add and AddPair; values
	// holds them and every spelling of them shorter than minPiece (the
	// whole values that scrubData removes).
	added  map[string]bool
	values map[string]bool
	// whole: spellings of values shorter than minAnywhere, matched as whole
	// words.
	whole []string
	// anywhere: spellings of minAnywhere to minPiece-1 bytes, matched
	// anywhere by Scrub; segments among them (see segments) are matched by
	// scrubData too.
	anywhere []string
	segments []string
	// pieces maps every minPiece-byte window of a spelling of minPiece bytes
	// or more (read as a little-endian uint64) to the shortest run of such
	// windows that is removed (minPiece, minHexPiece, or the whole spelling
	// of a short secret); filter holds one bit per hash of those windows
	// (1<<(64-shift) bits, at least 16 per window), so that most text
	// positions cost one test.
	pieces map[uint64]uint16
	filter []uint64
	shift  uint8
}

// Add registers v as a secret, and every spelling of it that Scrub looks
// for (see secretForms): escaped for JSON in the styles of Go, JavaScript,
// Python, PHP and .NET, for HTML and XML, percent-encoded, base64 and hex,
// one escaping inside another, and base64 or hex of an escaped one. Empty
// values are ignored; values shorter than 4 bytes are matched only as whole
// words, and have no base64 or hex spellings.
func (s *Secrets) Add(v string) {
	if v == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addValue(v)
}

// AddPair registers the credential user+":"+password in the spellings only
// an encoding gives it: base64 (standard and URL-safe, padded or not, at
// any alignment inside longer base64, as HTTP Basic authentication's
// header carries it) and hex, of the pair as sent and as each escaping
// style writes it. Its plain and escaped text spellings are not
// registered: they hold the password, which Add registers on its own, and
// every other piece of them is a piece of the user name alone (an e-mail
// address), which is no secret and appears in data ("holder@example.com"
// must not lose "@example.com"). An empty password adds nothing.
func (s *Secrets) AddPair(user, password string) {
	if password == "" {
		return
	}
	v := user + ":" + password
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first(v) {
		s.addForms(pairForms(v), len(v))
	}
}

// first records v as added and reports whether it was new; the caller
// holds s.mu for writing.
func (s *Secrets) first(v string) bool {
	if s.added == nil {
		s.added = map[string]bool{}
		s.values = map[string]bool{}
	}
	if s.added[v] {
		return false
	}
	s.added[v] = true
	return true
}

// addForms registers the spellings forms of a secret of n bytes, each
// also as the canonical pass writes it (" \ and control characters
// escaped), the text mayHold reads; the caller holds s.mu for writing.
func (s *Secrets) addForms(forms []form, n int) {
	for _, f := range forms {
		s.add(f, n)
		if c := canonicalString(f.text); c != f.text {
			s.add(form{c, f.min}, n)
		}
	}
}

// addValue is Add for a caller that holds s.mu for writing.
func (s *Secrets) addValue(v string) {
	if !s.first(v) {
		return
	}
	s.values[v] = true
	s.addForms(secretForms(v), len(v))
	if len(v) >= minPiece {
		for _, seg := range segments(v) {
			if !slices.Contains(s.segments, seg) {
				s.segments = append(s.segments, seg)
				s.anywhere = append(s.anywhere, seg)
			}
		}
	}
}

// canonicalString is v as the content of a canonical JSON string: " \ and
// control characters escaped (see appendControl), the rest as it is.
func canonicalString(v string) string {
	var out []byte
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == '"' || c == '\\' {
			if out == nil {
				out = append(make([]byte, 0, len(v)+8), v[:i]...)
			}
			out = appendControl(out, c)
		} else if out != nil {
			out = append(out, c)
		}
	}
	if out == nil {
		return v
	}
	return string(out)
}

// add registers one spelling of a secret whose value has n bytes: the
// value's length decides how it is matched. A spelling of a value shorter
// than minPiece is removed only whole: a piece of it is a piece of fewer
// than minPiece bytes of the value.
func (s *Secrets) add(f form, n int) {
	v := f.text
	switch {
	case n < minAnywhere:
		s.values[v] = true
		if !slices.Contains(s.whole, v) {
			s.whole = append(s.whole, v)
		}
		return
	case len(v) < minPiece:
		s.values[v] = true
		if !slices.Contains(s.anywhere, v) {
			s.anywhere = append(s.anywhere, v)
		}
		return
	}
	need := f.min
	if n < minPiece || need > len(v) {
		need = len(v)
	}
	if s.pieces == nil {
		s.pieces = map[uint64]uint16{}
	}
	grown := false
	for off := 0; off+minPiece <= len(v); off++ {
		x := load64(v, off)
		old, ok := s.pieces[x]
		if ok && int(old) <= need {
			continue
		}
		s.pieces[x] = uint16(min(need, 1<<16-1))
		if !ok {
			if 16*len(s.pieces) > 64*len(s.filter) {
				grown = true
			} else if !grown {
				s.setBit(x)
			}
		}
	}
	if grown {
		s.rebuildFilter()
	}
}

// rebuildFilter sizes the filter to 32 bits per window (it is rebuilt when
// it falls to 16) and sets the bit of each.
func (s *Secrets) rebuildFilter() {
	bits := 4096
	for bits < 32*len(s.pieces) {
		bits *= 2
	}
	s.filter = make([]uint64, bits/64)
	s.shift = uint8(64 - bitsLen(bits) + 1)
	for x := range s.pieces {
		s.setBit(x)
	}
}

// bitsLen is the number of bits of n.
func bitsLen(n int) int {
	k := 0
	for ; n > 0; n >>= 1 {
		k++
	}
	return k
}

func (s *Secrets) setBit(x uint64) {
	h := (x * 0x9E3779B97F4A7C15) >> s.shift
	s.filter[h>>6] |= 1 << (h & 63)
}

// window returns the shortest run of windows that is removed when window x
// is one (see pieces), and whether it is one.
func (s *Secrets) window(x uint64) (int, bool) {
	h := (x * 0x9E3779B97F4A7C15) >> s.shift
	if s.filter[h>>6]&(1<<(h&63)) == 0 {
		return 0, false
	}
	need, ok := s.pieces[x]
	return int(need), ok
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
