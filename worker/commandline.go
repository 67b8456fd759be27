package worker

import "strings"

// CommandLine is how cardsync was invoked, as far as a hint that prints a
// command needs it: the flags that chose the config file, the warehouse
// and the account. Every cardsync command line a message prints is built
// by Command or AccountCommand, so that it runs as printed, on the same
// config, warehouse and account (`cardsync backfill -config
// /etc/cardsync/config.toml -confirm-removals`, not a bare `cardsync
// backfill -confirm-removals` that reads no config). The zero value prints
// the bare command.
type CommandLine struct {
	// Config is the config file the command read (-config, or
	// $CARDSYNC_CONFIG: a person copying the hint into another shell may
	// not have the variable set); "" when none.
	Config string
	// DB is the -db flag, when it was given.
	DB string
	// Account is the account a hint is about when the config names its
	// accounts ([[accounts]]): AccountCommand adds -account with it.
	Account string
}

// Program is the name hints give the cardsync binary.
const Program = "cardsync"

// Command returns the command line of cardsync's command name with args,
// after the flags that chose the config and the warehouse, each word
// quoted for a POSIX shell where it needs it.
func (c CommandLine) Command(name string, args ...string) string {
	words := []string{Program, name}
	if c.Config != "" {
		words = append(words, "-config", c.Config)
	}
	if c.DB != "" {
		words = append(words, "-db", c.DB)
	}
	words = append(words, args...)
	for i, w := range words {
		words[i] = ShellQuote(w)
	}
	return strings.Join(words, " ")
}

// AccountCommand is Command for a command about c.Account alone: it adds
// -account ACCOUNT when the account is named.
func (c CommandLine) AccountCommand(name string, args ...string) string {
	if c.Account != "" {
		args = append([]string{"-account", c.Account}, args...)
	}
	return c.Command(name, args...)
}

// ForAccount returns c about account name; "" leaves -account out (the
// [api] table's one account).
func (c CommandLine) ForAccount(name string) CommandLine {
	c.Account = name
	return c
}

// ShellQuote returns s as one word of a POSIX shell: as it is when every
// byte is one a shell never reads specially, else in single quotes (a
// single quote inside closes them, is escaped with a backslash and opens
// them again).
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	plain := true
	for _, r := range s {
		if !shellPlain(r) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellPlain reports whether r means itself to a POSIX shell wherever it
// stands in a word (letters, digits and a few punctuation marks no shell
// expands or splits on).
func shellPlain(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("@%+:,./_-", r)
}
