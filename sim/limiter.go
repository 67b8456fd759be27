package sim

import "time"

// timeWindow counts events in the sliding window (now-length, now] and
// remembers the largest count it has seen.
type timeWindow struct {
	ts   []int64 // UnixNano; 8 bytes each, floods stay affordable
	head int
	max  int
}

func (w *timeWindow) prune(now time.Time, length time.Duration) {
	cut := now.UnixNano() - int64(length)
	for w.head < len(w.ts) && w.ts[w.head] <= cut {
		w.head++
	}
	if w.head > 1024 && w.head*2 > len(w.ts) {
		n := copy(w.ts, w.ts[w.head:])
		w.ts = w.ts[:n]
		w.head = 0
	}
}

func (w *timeWindow) len() int { return len(w.ts) - w.head }

func (w *timeWindow) add(now time.Time, length time.Duration) {
	w.prune(now, length)
	w.ts = append(w.ts, now.UnixNano())
	if n := w.len(); n > w.max {
		w.max = n
	}
}

// limiter is one rate limit (auth or general). Fixed windows start at the
// first request after the previous window ended, like Laravel's limiter.
type limiter struct {
	limit   int
	window  time.Duration
	sliding bool

	start time.Time // fixed: current window start
	count int       // fixed: accepted in current window

	accepted timeWindow // accepted requests (also the sliding limiter's state)
	seen     timeWindow // every request that reached the limiter
	nAcc     int64
	nRej     int64
}

// allow records a request at now and reports whether it is within the
// limit; if not, retry is how long until a request would be accepted.
func (l *limiter) allow(now time.Time) (ok bool, retry time.Duration) {
	l.seen.add(now, l.window)
	if l.sliding {
		l.accepted.prune(now, l.window)
		if l.accepted.len() >= l.limit {
			l.nRej++
			return false, time.Duration(l.accepted.ts[l.accepted.head] + int64(l.window) - now.UnixNano())
		}
	} else {
		if l.count == 0 || !now.Before(l.start.Add(l.window)) {
			l.start, l.count = now, 0
		}
		if l.count >= l.limit {
			l.nRej++
			return false, l.start.Add(l.window).Sub(now)
		}
		l.count++
	}
	l.accepted.add(now, l.window)
	l.nAcc++
	return true, 0
}

func (l *limiter) stats() LimiterStats {
	return LimiterStats{
		Limit: l.limit, Window: l.window,
		Accepted: l.nAcc, Rejected: l.nRej,
		MaxInWindow: l.accepted.max, MaxSeenInWindow: l.seen.max,
	}
}

// retryAfterSeconds renders a wait as a Retry-After value: whole seconds,
// rounded up, at least 1.
func retryAfterSeconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}
