package worker

import (
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// TestCommandLine: a hint's command repeats the flags that chose the
// config and the warehouse, then -account for a named account, then the
// hint's own arguments, each word quoted where a shell would read it.
func TestCommandLine(t *testing.T) {
	tests := []struct {
		name string
		cl   CommandLine
		got  func(CommandLine) string
		want string
	}{
		{"bare", CommandLine{}, func(c CommandLine) string { return c.AccountCommand("backfill", "-confirm-removals") },
			"cardsync backfill -confirm-removals"},
		{"config", CommandLine{Config: "/etc/cardsync/config.toml"}, func(c CommandLine) string { return c.AccountCommand("backfill", "-confirm-removals") },
			"cardsync backfill -config /etc/cardsync/config.toml -confirm-removals"},
		{"config, db and account", CommandLine{Config: "c.toml", DB: "./w.db", Account: "acme"},
			func(c CommandLine) string { return c.AccountCommand("backfill", "-confirm-removals") },
			"cardsync backfill -config c.toml -db ./w.db -account acme -confirm-removals"},
		{"a whole-warehouse command leaves the account out", CommandLine{Config: "c.toml", Account: "acme"},
			func(c CommandLine) string { return c.Command("rescan", "-backups") }, "cardsync rescan -config c.toml -backups"},
		{"a path with a space and a quote", CommandLine{Config: "/srv/my conf/it's.toml"},
			func(c CommandLine) string { return c.Command("status") }, `cardsync status -config '/srv/my conf/it'\''s.toml'`},
		{"ForAccount empty drops -account", CommandLine{Config: "c.toml", Account: "acme"},
			func(c CommandLine) string { return c.ForAccount("").AccountCommand("status") }, "cardsync status -config c.toml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.got(tt.cl); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestShellQuoteRoundTrips: whatever the bytes of a word (generated: the
// shell's special characters, spaces, quotes, newlines, non-ASCII), a
// POSIX shell reads ShellQuote's result back as that one word.
func TestShellQuoteRoundTrips(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	alphabet := []rune("aZ09 \t\n'\"\\$`!*?[]{}()<>|&;#~=%+:,./_-é\u00a0")
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"", "plain", "-config", "/etc/cardsync/config.toml", "it's", "~", "*", "#x", "a=b"}
	for range 200 {
		var b strings.Builder
		for range rng.IntN(12) + 1 {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		words = append(words, b.String())
	}
	var script strings.Builder
	for _, w := range words {
		// One word a line, NUL-terminated, so that newlines inside a
		// word survive.
		script.WriteString("printf '%s\\0' " + ShellQuote(w) + "\n")
	}
	out, err := exec.Command(sh, "-c", script.String()).Output()
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(got) != len(words) {
		t.Fatalf("sh printed %d words, want %d", len(got), len(words))
	}
	for i, w := range words {
		if got[i] != w {
			t.Errorf("ShellQuote(%q) = %s: the shell reads %q", w, ShellQuote(w), got[i])
		}
	}
	// A word of plain characters stays as it is.
	for _, w := range []string{"cardsync", "-confirm-removals", "/var/lib/cardsync/warehouse.db", "user@host:5432"} {
		if q := ShellQuote(w); q != w {
			t.Errorf("ShellQuote(%q) = %q, want it unquoted", w, q)
		}
	}
}
