package archtest

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The size limits ARCHITECTURE.md states, for every .go file of the module.
const (
	MaxFileLines = 500
	MaxFuncLines = 100
)

// Oversized walks the module at root (skipping hidden directories and testdata) and returns every
// .go file over MaxFileLines lines and every function over MaxFuncLines lines (from its func keyword
// to its closing brace), as "path:line: what" relative to root.
func Oversized(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		found, err := oversizedFile(path, rel)
		out = append(out, found...)
		return err
	})
	return out, err
}

func oversizedFile(path, rel string) ([]string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	if n := bytes.Count(src, []byte("\n")); n > MaxFileLines {
		out = append(out, fmt.Sprintf("%s: %d lines (at most %d)", rel, n, MaxFileLines))
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", rel, err)
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		start, end := fset.Position(fn.Pos()).Line, fset.Position(fn.End()).Line
		if n := end - start + 1; n > MaxFuncLines {
			out = append(out, fmt.Sprintf("%s:%d: func %s: %d lines (at most %d)", rel, start, fn.Name.Name, n, MaxFuncLines))
		}
	}
	return out, nil
}
