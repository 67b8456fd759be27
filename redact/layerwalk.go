package redact

import (
	"bytes"
	"slices"
)

// The walker's side of the layers: which strings are read through them,
// the edits applied to a string's canonical content, and what is counted.

// counts are what one walk found, for Stats.
type counts struct {
	cards   int // card numbers masked
	codes   int // codes dropped or replaced
	secrets int // strings that had a secret removed inside a layer
	// track counts track data and EMV card tags dropped whole: the scanner
	// of card numbers adds to it.
	track int
}

// mayLayer reports, cheaply, whether the canonical string content s with
// digits decimal digits can hold anything the layers find: a code needs
// minCode digits, a card number more; JSON text starts with '{' or '['.
func mayLayer(s []byte, digits int) bool {
	if digits >= minCode {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			continue
		case '\\':
			if i+1 < len(s) && (s[i+1] == 'n' || s[i+1] == 'r' || s[i+1] == 't') {
				i++
				continue
			}
		case '{', '[':
			return true
		}
		return false
	}
	return false
}

// layered reads the canonical string content out[start:] through its
// layers and rewrites it with what they found replaced. It returns the
// output and whether the content now holds an escape.
func (w *walker) layered(out []byte, start int, escaped bool) ([]byte, bool) {
	content := out[start:]
	ls := &w.ls
	ls.budget = 16*len(content) + 1<<16
	ls.secrets = w.p.secrets
	var ed []edit
	if escaped {
		u, m, _ := decodeBackslash(content)
		ed = mapEdits(nil, ls.text(u, 0), m, encBackslash)
	} else {
		ed = ls.text(content, 0)
	}
	if len(ed) == 0 {
		return out, escaped
	}
	ed = mergeEdits(ed)
	w.count(ed)
	w.layerBuf = applyEdits(w.layerBuf[:0], content, ed)
	out = append(out[:start], w.layerBuf...)
	return out, escaped || bytes.IndexByte(w.layerBuf, '\\') >= 0
}

// mergeEdits sorts ed and merges the edits that overlap into one that
// covers them all, with the replacement of the strongest kind.
func mergeEdits(ed []edit) []edit {
	slices.SortFunc(ed, func(a, b edit) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	out := ed[:1]
	for _, e := range ed[1:] {
		last := &out[len(out)-1]
		if e.start >= last.end {
			out = append(out, e)
			continue
		}
		last.end = max(last.end, e.end)
		last.first = last.first || e.first
		if e.kind > last.kind {
			last.kind, last.repl = e.kind, e.repl
		}
	}
	return out
}

// applyEdits appends src with the edits ed (sorted, apart) applied.
func applyEdits(dst, src []byte, ed []edit) []byte {
	last := 0
	for _, e := range ed {
		dst = append(dst, src[last:e.start]...)
		dst = append(dst, e.repl...)
		last = e.end
	}
	return append(dst, src[last:]...)
}

// count adds what the edits ed found to the walker's counts: a card number
// per first masked digit, a code per code edit, a secret per string.
func (w *walker) count(ed []edit) {
	secret := false
	for _, e := range ed {
		switch e.kind {
		case kMask:
			if e.first {
				w.counts.cards++
			}
		case kCard:
			w.counts.cards++
		case kSecret:
			secret = true
		case kCode:
			w.counts.codes++
		}
	}
	if secret {
		w.counts.secrets++
	}
}

// pathSecretKey reports whether key, a value word (valueWord), read after
// the key of the member whose value is the object of frame f, is a code
// key ("security": {"code": ...}). A key is read so only when its parent's
// key followed by "code" is a code key: "security" and "pin" are read so, while "verification":
// {"value": ...} stays (an e-mail's verification, a look-alike). Whether
// the parent's key is read so is found once per object.
func (w *walker) pathSecretKey(f *frame, key []byte) bool {
	if f.pk[1] <= f.pk[0] || f.pathCode < 0 || len(key) > 64 {
		return false
	}
	parent := w.out[f.pk[0]:f.pk[1]]
	if bytes.IndexByte(parent, '\\') >= 0 {
		w.pathBuf = unescape(w.pathBuf[:0], parent)
		parent = w.pathBuf[:len(w.pathBuf):len(w.pathBuf)]
	}
	if f.pathCode == 0 {
		f.pathCode = -1
		if w.pathKey = append(append(w.pathKey[:0], parent...), " code"...); secretKey(w.pathKey) {
			f.pathCode = 1
		} else {
			return false
		}
	}
	w.pathKey = append(append(append(w.pathKey[:0], parent...), ' '), key...)
	return secretKey(w.pathKey)
}

// notePair notes the string just written at out[at:], the value of a
// pair's name member or the first element of an array, in the innermost
// frame: closePair reads it once the frame closes.
func (w *walker) notePair(at int) {
	w.pairKey = false
	if len(w.stack) == 0 || len(w.out)-at > 66 {
		return
	}
	w.stack[len(w.stack)-1].name = [2]int{at + 1, len(w.out) - 1}
}

// closePair checks the string noted in f, which is closing: when f is an
// object with a value member or an array of two elements, and the string
// names a code, the document is read again for pairs (dropPairs).
func (w *walker) closePair(f *frame) {
	if w.pairs || f.object && !f.hasVal || !f.object && f.members != 2 {
		return
	}
	s := w.out[f.name[0]:f.name[1]]
	if bytes.IndexByte(s, '\\') >= 0 {
		s = unescape(w.pathBuf[:0], s)
	}
	w.pairs = secretKey(s)
}
