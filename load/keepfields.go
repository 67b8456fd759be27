package load

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cardsync/cardsync/redact"
)

// ErrKeepFields is wrapped by CheckKeepFields's errors.
var ErrKeepFields = errors.New("invalid keep_fields")

// CheckKeepFields checks Options.KeepFields ([cards] keep_fields): every
// name non-empty, without surrounding spaces or control characters, and
// named once. "id" need not be listed: the id is the card's identity and is
// always kept.
func CheckKeepFields(names []string) error {
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		switch {
		case n == "":
			return fmt.Errorf("%w: name %d is empty", ErrKeepFields, i+1)
		case strings.TrimSpace(n) != n:
			return fmt.Errorf("%w: name %d (%q) has surrounding spaces", ErrKeepFields, i+1, n)
		case strings.ContainsFunc(n, func(r rune) bool { return r < 0x20 || r == 0x7f }):
			return fmt.Errorf("%w: name %d has a control character", ErrKeepFields, i+1)
		case seen[n]:
			return fmt.Errorf("%w: %q is named twice", ErrKeepFields, n)
		}
		seen[n] = true
	}
	return nil
}

// keepSet is the set of top-level fields a warehouse keeps (nil: all).
type keepSet map[string]bool

// newKeepSet returns the set of names and "id"; nil names: nil (every field
// kept).
func newKeepSet(names []string) keepSet {
	if names == nil {
		return nil
	}
	k := make(keepSet, len(names)+1)
	for _, n := range names {
		k[n] = true
	}
	k["id"] = true
	return k
}

// apply returns the card's canonical JSON doc and its fields with only the
// kept top-level members, and how many it dropped. A card whose fields are
// all kept is returned as it is.
func (k keepSet) apply(doc []byte, fields []redact.Field) ([]byte, []redact.Field, int) {
	if k == nil {
		return doc, fields, 0
	}
	drop := 0
	for _, f := range fields {
		if !k[f.Name] {
			drop++
		}
	}
	if drop == 0 {
		return doc, fields, 0
	}
	ms, ok := topMembers(doc)
	if !ok {
		return doc, fields, 0
	}
	out := make([]byte, 0, len(doc))
	out = append(out, '{')
	kept := make([]redact.Field, 0, len(fields)-drop)
	for _, m := range ms {
		if !k[m.key] {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, doc[m.start:m.end]...)
	}
	for _, f := range fields {
		if k[f.Name] {
			kept = append(kept, f)
		}
	}
	return append(out, '}'), kept, drop
}
