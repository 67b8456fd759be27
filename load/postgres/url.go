package postgres

import "github.com/cardsync/cardsync/load"

// RedactURL is load.RedactURL: a PostgreSQL URL fit for logs and error
// messages, its password replaced by "xxxxx".
func RedactURL(s string) string { return load.RedactURL(s) }
