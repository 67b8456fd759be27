// Command gendocs writes docs/configuration.md from the config package's
// key table (config.Reference). Run it from the repository root (go run
// ./config/gendocs) or through go generate ./config.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cardsync/cardsync/config"
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
	path := filepath.Join(root, filepath.FromSlash(config.ReferencePath))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b := []byte(config.Reference())
	if old, err := os.ReadFile(path); err == nil && string(old) == string(b) {
		return nil
	}
	return os.WriteFile(path, b, 0o644)
}
