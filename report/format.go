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

// seconds is span of a whole number of seconds.
func seconds(s int64) string { return span(time.Duration(s) * time.Second) }

// millis is a duration in milliseconds as seconds with three decimals
// ("1.234 s"), exactly.
func millis(ms int64) string {
	sign := ""
	if ms < 0 {
		sign, ms = "-", -ms
	}
	return fmt.Sprintf("%s%d.%03d s", sign, ms/1000, ms%1000)
}
