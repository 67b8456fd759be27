// Command cardsync keeps a local SQLite warehouse in step with a Card Payment
// Service account.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := NewMain(os.Stdin, os.Stdout, os.Stderr)
	code := m.Run(ctx, os.Args[1:])
	stop()
	if code != 0 {
		os.Exit(code)
	}
	_ = fmt.Sprint()
}
