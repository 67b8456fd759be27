// Command gendocs writes what is generated from schema.Objects:
// docs/schema.md and datasette/metadata.json.
// Run it from the repository root (go run ./schema/gendocs) or through
// go generate ./schema.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cardsync/cardsync/schema"
)

func main() {
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	doc := filepath.Join(root, filepath.FromSlash(schema.DocPath))
	if err := os.MkdirAll(filepath.Dir(doc), 0o755); err != nil {
		return err
	}
	if err := writeIfChanged(doc, []byte(schema.Document())); err != nil {
		return err
	}
	meta, err := schema.DatasetteMetadata()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(root, "datasette"), 0o755); err != nil {
		return err
	}
	return writeIfChanged(filepath.Join(root, "datasette", "metadata.json"), meta)
}

func writeIfChanged(path string, b []byte) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == string(b) {
		return nil
	}
	return os.WriteFile(path, b, 0o644)
}
