package redact

import (
	"regexp"
)

// The test oracle: a second, plain implementation of "the card numbers left
// in a text", built from a regular expression and IsPAN, to check the
// scanner against.

// runRE matches a run: digit groups joined by one or two separators.
var runRE = regexp.MustCompile(`[0-9]+(?:(?:[ \-./_]|\x{00a0}){1,2}[0-9]+)*`)

// groupRE matches the digit groups of a run.
var groupRE = regexp.MustCompile(`[0-9]+`)

// remainingPANs returns the card numbers left in s: every group-aligned
// window of 13 to 19 digits of every run that IsPAN accepts.
func remainingPANs(s string) []string {
	var found []string
	for _, loc := range runRE.FindAllStringIndex(s, -1) {
		if loc[0] > 0 && s[loc[0]-1] == '+' {
			continue // an international phone number (see phoneRun)
		}
		run := s[loc[0]:loc[1]]
		groups := groupRE.FindAllString(run, -1)
		for from := range groups {
			d := ""
			for to := from; to < len(groups); to++ {
				d += groups[to]
				if len(d) > 19 {
					break
				}
				if IsPAN(d) {
					found = append(found, d)
				}
			}
		}
	}
	return found
}

// onlyStars reports whether out differs from in only by '*' written over
// ASCII digits.
func onlyStars(in, out string) bool {
	if len(in) != len(out) {
		return false
	}
	for i := 0; i < len(in); i++ {
		if in[i] != out[i] && !(out[i] == '*' && isDigit(in[i])) {
			return false
		}
	}
	return true
}
