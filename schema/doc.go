// Package schema embeds the warehouse's numbered SQL migrations. It only
// carries the files; package load applies them. It must not hold Go logic
// about the data, and a shipped migration must never be edited: a change
// is a new numbered file.
package schema
