// Package schema embeds the warehouse's numbered SQL migrations. It only
// carries the files; package load applies them.
package schema
