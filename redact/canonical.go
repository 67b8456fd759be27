package redact

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// The canonical pass: what Policy.JSON does to the walker's output. The
// walker writes the redacted document compact, with its strings in
// canonical form but its members in the order received; this pass sorts
// every object's members, keeps the last of duplicate keys, removes the
// secrets of a Secrets set from every string, key and number, and lists the
// top-level fields. It reads a document the walker wrote, so it checks
// nothing: that document is valid JSON.

// NewSecretPolicy is NewPolicy(extraKeys) that also removes secrets from
// every document (see JSON): each string, key and number in which Scrub
// would find a value of secrets or a bearer token has that part replaced by
// "[REDACTED]". The set is read at each call, so values added later (a token
// fetched while a run goes on) are removed from the documents that follow.
// A nil secrets is NewPolicy.
func NewSecretPolicy(extraKeys []string, secrets *Secrets) *Policy {
	p := NewPolicy(extraKeys)
	p.secrets = secrets
	return p
}

// JSONCount is JSON that also returns how many strings, keys and numbers
// of the document had a secret removed (always 0 for a Policy from
// NewPolicy).
func (p *Policy) JSONCount(doc []byte) (out []byte, fields []Field, secrets int, err error) {
	out, fields, st, err := p.redact(doc, false)
	return out, fields, st.Secrets, err
}

// maxKept is the largest scratch buffer a pooled walker keeps.
const maxKept = 1 << 20

// member is an object member in the output: the key's opening quote at
// start, its closing quote at keyEnd-1, the value ending at end.
type member struct{ start, keyEnd, end int }

// key returns the member's key, as written (canonical, escapes included),
// in buf.
func (m member) key(buf []byte) []byte { return buf[m.start+1 : m.keyEnd-1] }

// canonFrame is an open array or object of the canonical pass.
type canonFrame struct {
	object bool
	// start is where its '{' is in the output; base the index of its first
	// member in canon.members.
	start, base int
	// sorted stays true while every key is above the one before it: the
	// object is written as it came.
	sorted bool
}

// canon holds the canonical pass's scratch space, kept with a walker.
type canon struct {
	walked  []byte // the walker's output, the pass's input
	stack   []canonFrame
	members []member
	scratch []byte
	text    []byte
	names   []byte
	ends    []int // where each top-level name ends in names
}

// run writes src's canonical form to out (see Policy.JSON) and returns it,
// the top-level fields when root says src is an object, and how many
// strings, keys and numbers had a secret removed.
func (c *canon) run(secrets *Secrets, root bool, out []byte) (_ []byte, fields []Field, removed int) {
	src := c.walked
	scrub := secrets != nil
	if scrub {
		secrets.mu.RLock()
		defer secrets.mu.RUnlock()
		scrub = len(secrets.values) > 0
	}
	c.stack, c.members = c.stack[:0], c.members[:0]
	wantKey := false
	for i := 0; i < len(src); {
		switch ch := src[i]; ch {
		case '{', '[':
			c.stack = append(c.stack, canonFrame{object: ch == '{', start: len(out), base: len(c.members), sorted: true})
			out = append(out, ch)
			i++
			wantKey = ch == '{' && src[i] != '}'
		case ',':
			f := &c.stack[len(c.stack)-1]
			if f.object {
				c.members[len(c.members)-1].end = len(out)
				wantKey = true
			}
			out = append(out, ',')
			i++
		case ':':
			out = append(out, ':')
			i++
		case ']':
			c.stack = c.stack[:len(c.stack)-1]
			out = append(out, ']')
			i++
		case '}':
			out, fields = c.closeObject(out, root, fields)
			i++
		case '"':
			j := stringEnd(src, i)
			start := len(out)
			var n int
			out, n = c.writeText(out, src[i+1:j-1], scrub, secrets, true)
			removed += n
			i = j
			if wantKey {
				wantKey = false
				f := &c.stack[len(c.stack)-1]
				m := member{start: start, keyEnd: len(out)}
				if len(c.members) > f.base && bytes.Compare(c.members[len(c.members)-1].key(out), m.key(out)) >= 0 {
					f.sorted = false
				}
				c.members = append(c.members, m)
			}
		default: // a number, true, false or null
			j := i
			for j < len(src) && src[j] != ',' && src[j] != ']' && src[j] != '}' {
				j++
			}
			if scrub && (ch == '-' || isDigit(ch)) {
				var n int
				out, n = c.writeText(out, src[i:j], scrub, secrets, false)
				removed += n
			} else {
				out = append(out, src[i:j]...)
			}
			i = j
		}
	}
	return out, fields, removed
}

// closeObject writes the '}' of the innermost object, sorts its members
// if they came out of order, and returns out and fields: the object's own
// when it is the top-level object of a document that is one (root).
func (c *canon) closeObject(out []byte, root bool, fields []Field) ([]byte, []Field) {
	f := c.stack[len(c.stack)-1]
	ms := c.members[f.base:]
	if len(ms) > 0 {
		ms[len(ms)-1].end = len(out)
	}
	out = append(out, '}')
	if !f.sorted {
		out = c.sortMembers(out, f.start, ms)
		ms = c.members[f.base:]
	}
	if root && len(c.stack) == 1 {
		fields = c.fields(out, ms)
	}
	c.members = c.members[:f.base]
	c.stack = c.stack[:len(c.stack)-1]
	return out, fields
}

// stringEnd returns the offset after the closing quote of the canonical
// string that starts at src[i].
func stringEnd(src []byte, i int) int {
	for j := i + 1; ; {
		j += bytes.IndexByte(src[j:], '"')
		// The quote closes the string unless an odd number of
		// backslashes escapes it.
		k := j
		for src[k-1] == '\\' {
			k--
		}
		if (j-k)%2 == 0 {
			return j + 1
		}
		j++
	}
}

// writeText appends s, the content of a canonical string (quoted is set)
// or a number's text, with secrets removed when scrub is set, and reports
// whether it removed any (1) or not (0). A number with a secret removed
// becomes a string.
func (c *canon) writeText(out, s []byte, scrub bool, secrets *Secrets, quoted bool) ([]byte, int) {
	if scrub && secrets.mayHold(s) {
		text := s
		if quoted && bytes.IndexByte(s, '\\') >= 0 {
			c.text = unescape(c.text[:0], s)
			text = c.text
		}
		if clean, changed := secrets.scrubData(string(text)); changed {
			out = append(out, '"')
			for k := 0; k < len(clean); k++ {
				if b := clean[k]; b < 0x20 || b == '"' || b == '\\' {
					out = appendControl(out, b)
				} else {
					out = append(out, b)
				}
			}
			return append(out, '"'), 1
		}
	}
	if !quoted {
		return append(out, s...), 0
	}
	out = append(out, '"')
	out = append(out, s...)
	return append(out, '"'), 0
}

// sortMembers rewrites the object at out[start:], whose members are ms,
// with its members ordered by key and, of members with the same key, only
// the last. It returns the output and leaves c.members[base:] describing
// the members written.
func (c *canon) sortMembers(out []byte, start int, ms []member) []byte {
	c.scratch = append(c.scratch[:0], out[start:]...)
	buf := c.scratch
	for k := range ms {
		ms[k].start -= start
		ms[k].keyEnd -= start
		ms[k].end -= start
	}
	slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(a.key(buf), b.key(buf)) })
	out = append(out[:start], '{')
	kept := ms[:0]
	for k, m := range ms {
		if k+1 < len(ms) && bytes.Equal(m.key(buf), ms[k+1].key(buf)) {
			continue // a later member has the same key: the last wins
		}
		if len(kept) > 0 {
			out = append(out, ',')
		}
		at := len(out)
		out = append(out, buf[m.start:m.end]...)
		kept = append(kept, member{start: at, keyEnd: at + m.keyEnd - m.start, end: len(out)})
	}
	c.members = c.members[:len(c.members)-len(ms)+len(kept)]
	return append(out, '}')
}

// fields lists the top-level fields of the object whose members are ms in
// out: one string holds every name.
func (c *canon) fields(out []byte, ms []member) []Field {
	c.names = c.names[:0]
	fields := make([]Field, len(ms))
	ends := c.ends[:0]
	for _, m := range ms {
		c.names = unescape(c.names, m.key(out))
		ends = append(ends, len(c.names))
	}
	c.ends = ends
	names := string(c.names)
	at := 0
	for k, m := range ms {
		fields[k] = Field{Name: names[at:ends[k]], Type: jsonType(out[m.keyEnd+1])}
		at = ends[k]
	}
	return fields
}

// mayHold reports whether b may hold a secret of s or a bearer token: it
// is false for most text at the cost of one multiplication per byte, and
// allocates nothing. The caller holds s.mu.
func (s *Secrets) mayHold(b []byte) bool {
	for _, v := range s.whole {
		if bytes.Contains(b, []byte(v)) {
			return true
		}
	}
	for _, v := range s.anywhere {
		if bytes.Contains(b, []byte(v)) {
			return true
		}
	}
	if len(s.pieces) > 0 {
		for p := 0; p+minPiece <= len(b); p++ {
			if _, ok := s.window(binary.LittleEndian.Uint64(b[p:])); ok {
				return true
			}
		}
	}
	for p := 0; p+len("bearer") < len(b); p++ {
		if b[p]|0x20 == 'b' && bytes.EqualFold(b[p:p+len("bearer")], []byte("bearer")) {
			return true
		}
	}
	return false
}

// scrubData is steps 1 and 2 of Scrub (secrets and bearer tokens, not card
// numbers: the walker masked those by its own rules, and the card's id is
// never masked), for a caller that holds s.mu.
//
// Unlike Scrub (for logs), a secret shorter than 8 bytes (a short password
// such as "demo" or "2028") is removed from data only where a whole value
// or key is that secret, surrounding white space aside: anywhere else it is
// far more likely an ordinary word or number ("demo@example.com",
// "2028-01-01") than a leak, and rewriting it would corrupt the data.
// Secrets of 8 bytes or more, tokens among them, are removed wherever they
// or a piece of 8 bytes or more of them appear.
func (s *Secrets) scrubData(text string) (string, bool) {
	if t := strings.TrimSpace(text); t != "" && len(t) < minPiece && s.values[t] {
		return Redacted, true
	}
	changed := false
	for {
		t, c1 := s.replaceSecrets(text, true)
		t, c2 := scrubBearer(t)
		if !c1 && !c2 {
			return text, changed
		}
		text, changed = t, true
	}
}

// HoldsSecret reports whether Text would remove a secret or a bearer token
// from s, without masking its card numbers: the check
// for a card's id, on every card.
func (p *Policy) HoldsSecret(s string) bool {
	if p.secrets == nil || s == "" {
		return false
	}
	p.secrets.mu.RLock()
	defer p.secrets.mu.RUnlock()
	_, found := p.secrets.scrubData(s)
	return found
}

// Text returns s redacted as a string value of a document is (see JSON):
// its card numbers masked, track data dropped, its text layers read (codes
// in query strings, headers, XML, JSON text or free text replaced) and,
// for a Policy from NewSecretPolicy, its secrets and bearer tokens
// replaced; scrubbed reports whether a secret or token was. It is the rule
// for text stored beside documents: account names, reasons, error
// messages, a rejected item that is not JSON. Text that is not UTF-8 is
// masked and scrubbed only.
func (p *Policy) Text(s string) (_ string, scrubbed bool) {
	if utf8.ValidString(s) {
		doc, err := json.Marshal(s)
		if err == nil {
			out, _, st, err := p.JSONStats(doc)
			var text string
			if err == nil && json.Unmarshal(out, &text) == nil {
				return text, st.Secrets > 0
			}
		}
	}
	if p.secrets != nil {
		p.secrets.mu.RLock()
		s, scrubbed = p.secrets.scrubData(s)
		p.secrets.mu.RUnlock()
	}
	return PANs(s), scrubbed
}
