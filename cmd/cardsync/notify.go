package main

import (
	"fmt"
	"net"
	"strconv"
	"time"
)

// notifier speaks systemd's sd_notify protocol over $NOTIFY_SOCKET. The zero
// value (no socket) does nothing, so the daemon runs the same outside systemd.
type notifier struct {
	addr     string
	watchdog time.Duration
}

// newNotifier reads NOTIFY_SOCKET and WATCHDOG_USEC through getenv.
func newNotifier(getenv func(string) string) *notifier {
	n := &notifier{addr: getenv("NOTIFY_SOCKET")}
	if usec, err := strconv.ParseInt(getenv("WATCHDOG_USEC"), 10, 64); err == nil && usec > 0 {
		n.watchdog = time.Duration(usec) * time.Microsecond
	}
	return n
}

// Send writes one notification (for example "READY=1"). Without a socket it
// is a no-op.
func (n *notifier) Send(state string) error {
	if n == nil || n.addr == "" {
		return nil
	}
	addr := n.addr
	if addr[0] == '@' {
		addr = "\x00" + addr[1:] // abstract socket
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("sd_notify: %w", err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("sd_notify: %w", err)
	}
	return nil
}

// WatchdogInterval returns how often to send WATCHDOG=1 (half the timeout
// systemd set), or 0 when no watchdog is configured.
func (n *notifier) WatchdogInterval() time.Duration {
	if n == nil {
		return 0
	}
	return n.watchdog / 2
}
