package english

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestPluralEndings: words generated for each class of ending take that
// class's plural, alone, as the last word of a phrase, and as one of two
// alternatives ("x or y").
func TestPluralEndings(t *testing.T) {
	const (
		vowels     = "aeiou"
		consonants = "bcdfgjklmnpqrtvw" // no h, s, x, y, z: those decide a class
	)
	r := rand.New(rand.NewPCG(1, 35))
	stem := func() string {
		var b strings.Builder
		for i := range 1 + r.IntN(6) {
			set := consonants
			if i%2 == 1 {
				set = vowels
			}
			b.WriteByte(set[r.IntN(len(set))])
		}
		return b.String()
	}
	pick := func(set string) string { return string(set[r.IntN(len(set))]) }
	classes := []struct {
		name string
		make func() (word, plural string)
	}{
		{"hissing", func() (string, string) {
			w := stem() + []string{"s", "x", "z", "ch", "sh"}[r.IntN(5)]
			return w, w + "es"
		}},
		{"consonant y", func() (string, string) {
			s := stem() + pick(consonants)
			return s + "y", s + "ies"
		}},
		{"vowel y", func() (string, string) {
			w := stem() + pick(vowels) + "y"
			return w, w + "s"
		}},
		{"other", func() (string, string) {
			w := stem() + pick(consonants+vowels)
			return w, w + "s"
		}},
		{"abbreviation", func() (string, string) {
			w := strings.ToUpper(stem() + pick(consonants+"sxzy"))
			return w, w + "s"
		}},
	}
	for _, c := range classes {
		t.Run(c.name, func(t *testing.T) {
			for range 200 {
				word, want := c.make()
				if got := Plural(word); got != want {
					t.Errorf("Plural(%q) = %q, want %q", word, got, want)
				}
				other, others := classes[r.IntN(len(classes))].make()
				if got := Plural(word + " or " + other); got != want+" or "+others {
					t.Errorf("Plural(%q) = %q, want %q", word+" or "+other, got, want+" or "+others)
				}
				for _, sep := range []string{" ", "-"} {
					head := stem()
					if got := Plural(head + sep + word); got != head+sep+want {
						t.Errorf("Plural(%q) = %q, want %q", head+sep+word, got, head+sep+want)
					}
				}
			}
		})
	}
}

// TestCountAgrees: a count of 1 keeps the noun as given, every other count
// (0, negative, large, of any integer type) takes its plural, and the
// pronouns follow the same rule.
func TestCountAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 35))
	nouns := []string{"card", "account snapshot", "non-demo run", "batch", "entry", "security code", "PIN"}
	for range 500 {
		noun := nouns[r.IntN(len(nouns))]
		n := r.Int64N(2_000_000) - 1_000_000
		if r.IntN(4) == 0 {
			n = 1
		}
		want := strconv.FormatInt(n, 10) + " " + Plural(noun)
		pronoun, they := "them", "they are"
		if n == 1 {
			want, pronoun, they = "1 "+noun, "it", "it is"
		}
		if got := Count(n, noun); got != want {
			t.Errorf("Count(int64 %d, %q) = %q, want %q", n, noun, got, want)
		}
		if got := Count(int(n), noun); got != want {
			t.Errorf("Count(int %d, %q) = %q, want %q", n, noun, got, want)
		}
		if got := Them(n); got != pronoun {
			t.Errorf("Them(%d) = %q, want %q", n, got, pronoun)
		}
		if got := TheyAre(n); got != they {
			t.Errorf("TheyAre(%d) = %q, want %q", n, got, they)
		}
		if n >= 0 {
			if got := Count(uint64(n), noun); got != want {
				t.Errorf("Count(uint64 %d, %q) = %q, want %q", n, noun, got, want)
			}
		}
	}
	if got := Count(uint64(1<<63+1), "card"); got != "9223372036854775809 cards" {
		t.Errorf("Count(1<<63+1) = %q", got)
	}
}

// TestMiscounted: a count of one before a plural noun is found, before or
// after the noun's adjective; a singular noun, a plural after another
// count, a verb or a word that only ends in s is not.
func TestMiscounted(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 35))
	nouns := []string{"card", "snapshot", "run", "page", "batch", "entry", "version", "PIN"}
	adjectives := []string{"", "live ", "distinct ", "account "}
	tails := []string{"", ".", ", the last", " of the data", " was stored", " has one", " (this run)"}
	for range 300 {
		noun := nouns[r.IntN(len(nouns))]
		adj := adjectives[r.IntN(len(adjectives))]
		tail := tails[r.IntN(len(tails))]
		lead := []string{"", "run 7: ", "(", "lacks "}[r.IntN(4)]
		wrong := lead + "1 " + adj + Plural(noun) + tail
		if got := Miscounted(wrong); len(got) != 1 {
			t.Errorf("Miscounted(%q) = %q, want it found", wrong, got)
		}
		for _, right := range []string{lead + Count(1, adj+noun) + tail, lead + Count(2, adj+noun) + tail,
			lead + "21 " + adj + Plural(noun) + tail, "v1 " + Plural(noun), "0.1 " + Plural(noun)} {
			if got := Miscounted(right); len(got) != 0 {
				t.Errorf("Miscounted(%q) = %q, want nothing", right, got)
			}
		}
	}
	for _, fine := range []string{"1 status", "1 class", "1 card has", "1 alias", "1 in a row", "1 removed"} {
		if got := Miscounted(fine); len(got) != 0 {
			t.Errorf("Miscounted(%q) = %q, want nothing", fine, got)
		}
	}
}
