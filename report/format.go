package report

import (
	"fmt"
	"time"
)

// span is an exact duration for people, to the second: "42 s",
// "3 min 5 s", "2 h 5 min", "3 d 4 h" (the larger unit and the next one,
// the next one left out when 0). Under a second, and negative, is
// "under 1 s": stamps are whole seconds.
func span(d time.Duration) string {
	s := int64(d / time.Second)
	if s < 1 {
		return "under 1 s"
	}
	units := []struct {
		name string
		secs int64
	}{{"d", 86400}, {"h", 3600}, {"min", 60}, {"s", 1}}
	for i, u := range units {
		if s < u.secs {
			continue
		}
		out := fmt.Sprintf("%d %s", s/u.secs, u.name)
		if i+1 < len(units) {
			next := units[i+1]
			if rest := s % u.secs / next.secs; rest > 0 {
				out += fmt.Sprintf(" %d %s", rest, next.name)
			}
		}
		return out
	}
	return "under 1 s" // never: s >= 1
}

// runSpan is a run's duration of ms milliseconds for people. A measured
// one (exact: sync_runs.duration_ms) keeps its sub-second part: "0.042 s",
// "1.234 s" under a minute, "3 min 5.2 s" (tenths, cut, not rounded)
// under an hour, span beyond. One from whole-second stamps is span.
func runSpan(ms int64, exact bool) string {
	switch {
	case !exact || ms < 0 || ms >= 3600*1000:
		return span(time.Duration(ms) * time.Millisecond)
	case ms < 60*1000:
		return millis(ms)
	}
	return fmt.Sprintf("%d min %d.%d s", ms/60000, ms%60000/1000, ms%1000/100)
}

// millis is a duration in milliseconds as seconds with three decimals
// ("1.234 s"), exactly.
func millis(ms int64) string {
	sign := ""
	if ms < 0 {
		sign, ms = "-", -ms
	}
	return fmt.Sprintf("%s%d.%03d s", sign, ms/1000, ms%1000)
}
