package load

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/cardsync/cardsync/load/internal/jsonscan"
	"github.com/cardsync/cardsync/redact"
)

// MaxRejectedBytes bounds rejected_cards.data: a rejected item is stored
// after redaction, cut to this many bytes.
const MaxRejectedBytes = 64 << 10

// quarantineData redacts a rejected item for storage and counts the
// secrets it removed, with what else the policy found. An item the JSON policy can walk is stored redacted
// and canonical; one it cannot (too deep, not UTF-8, not JSON) is treated as
// text: invalid bytes replaced, the values of secret-named keys replaced,
// card numbers masked and secrets removed. The result is cut to
// MaxRejectedBytes on a character boundary.
func quarantineData(rules ItemRules, raw []byte) (string, int, redact.Stats) {
	policy := rules.Policy
	var s string
	var secrets int
	var stats redact.Stats
	if out, _, st, err := policy.JSONStats(raw); err == nil {
		if o, masked := pseudonymizeData(policy, rules.IDKey, out); masked {
			out = o
			st.CardNumbers++
		}
		s, secrets, stats = string(out), st.Secrets, st
	} else {
		s = strings.ToValidUTF8(string(raw), "\uFFFD")
		s = secretMember.ReplaceAllStringFunc(s, func(m string) string {
			sub := secretMember.FindStringSubmatch(m)
			if !policy.SecretKey(jsonscan.UnquoteKey(sub[1])) {
				return m
			}
			return `"` + sub[1] + `":"[REDACTED]"`
		})
		var scrubbed bool
		if s, scrubbed = policy.Text(s); scrubbed {
			secrets = 1
		}
	}
	if len(s) <= MaxRejectedBytes {
		return s, secrets, stats
	}
	cut := MaxRejectedBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], secrets, stats
}

// secretMember matches a JSON member whose value is a string or a number,
// for quarantineData's text fallback.
var secretMember = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*)`)
