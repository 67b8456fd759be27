// Package archtest holds the checks that keep ARCHITECTURE.md true: the import rules the document
// lists in its "Import rules" block, read from the document itself and checked against the module's
// imports as `go list` reports them, and the size rules of the style guide (no .go file over 500 lines,
// no function over 100), with no exemptions.
//
// The import rules are judged on each package's own imports, tests aside (a package's _test.go files
// may import what its code must not). What imports cannot show is left to review and said in the
// document: which of the packages that import net/http act as an HTTP client, whether a package
// holds a rule that belongs to another, whether `metrics` writes the warehouse.
//
// It is imported by nothing: its tests run with `go test ./...`.
package archtest
