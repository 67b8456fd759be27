package config

import (
	"net"
	"strconv"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/cardsync/cardsync/extract"
)

// metricsSettings parses the [metrics] table. The listen address needs a
// host: an empty one (":9464") would listen on every interface without
// saying so. A non-loopback host ("0.0.0.0:9464", a LAN address) is
// accepted because the user wrote it; /metrics and /healthz carry no
// secret, but they tell whoever can reach them how the sync is doing.
func (c *Config) metricsSettings(s *Settings) error {
	if l := c.Metrics.Listen; l != "" {
		host, port, err := net.SplitHostPort(l)
		if err != nil {
			return c.fail("metrics.listen", "%q: want host:port, e.g. \"127.0.0.1:9464\"", l)
		}
		if host == "" {
			return c.fail("metrics.listen", "%q has no host: write \"127.0.0.1%s\" for loopback, or \"0.0.0.0%s\" to listen on every interface", l, l, l)
		}
		if !extract.IsLoopback(host) && net.ParseIP(host) == nil {
			return c.fail("metrics.listen", "%q: the host must be an IP address or localhost", l)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return c.fail("metrics.listen", "%q: port must be a number from 0 to 65535", l)
		}
		s.MetricsListen = l
	}
	if c.Metrics.HealthyWithin == "" {
		s.HealthyWithin = 3 * ScheduleInterval(s.Schedule, time.Now().In(s.Location))
		return nil
	}
	d, err := positiveDuration(c.Metrics.HealthyWithin)
	if err != nil {
		return c.fail("metrics.healthy_within", "%v (or \"\" for three schedule intervals)", err)
	}
	s.HealthyWithin = d
	return nil
}

// ScheduleInterval is the longest gap between the next ten runs of sched
// after now: for "*/15 * * * *" 15 minutes, for "0 9 * * 1-5" the weekend.
func ScheduleInterval(sched cron.Schedule, now time.Time) time.Duration {
	var longest time.Duration
	t := sched.Next(now)
	for range 10 {
		next := sched.Next(t)
		if next.IsZero() {
			break
		}
		longest = max(longest, next.Sub(t))
		t = next
	}
	if longest <= 0 {
		return time.Hour
	}
	return longest
}

// IsLoopbackListen reports whether a [metrics] listen address binds only
// loopback (serve warns otherwise).
func IsLoopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && extract.IsLoopback(host)
}
