package redact

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

//go:generate go run gen_confusables.go

// confusable returns the Latin look-alike of r in the table made from
// Unicode's confusables (see gen_confusables.go), or "" when it has none.
func confusable(r rune) string {
	if r < 0x80 {
		return ""
	}
	i, ok := slices.BinarySearch(confusableRunes[:], r)
	if !ok {
		return ""
	}
	start := 0
	if i > 0 {
		start = int(confusableEnd[i-1])
	}
	return confusableLatin[start:confusableEnd[i]]
}

// confuse returns key, a text in NFKC, with each character that looks like
// Latin letters or digits written as them (UTS #39 confusables, restricted
// to Latin prototypes). With exact, each character is read as it is ("Ν",
// Greek capital nu, is "N"); without, as its lower case is, in the case of
// the character ("Ν" is "V", as "ν" is "v"), which is how a key compares
// after case folding. It returns key itself when nothing changes.
func confuse(key []byte, exact bool) []byte {
	var out []byte
	for i := 0; i < len(key); {
		c := key[i]
		if c < utf8.RuneSelf {
			if out != nil {
				out = append(out, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(key[i:])
		var latin string
		if exact {
			latin = confusable(r)
		} else if lr := unicode.ToLower(r); lr != r {
			latin = strings.ToUpper(confusable(lr))
		} else {
			latin = confusable(r)
		}
		if latin == "" {
			if out != nil {
				out = append(out, key[i:i+n]...)
			}
		} else {
			if out == nil {
				out = append(make([]byte, 0, len(key)), key[:i]...)
			}
			out = append(out, latin...)
		}
		i += n
	}
	if out == nil {
		return key
	}
	return out
}
