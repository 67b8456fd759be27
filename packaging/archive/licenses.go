package main

import (
	"bytes"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"unicode"
)

// thirdPartyLicenses returns the license texts of every module linked into
// the Go binary at bin, read from the module cache modCache (go env
// GOMODCACHE): for each module its path and version, then each of its
// top-level LICENSE, LICENCE, COPYING, NOTICE or PATENTS files, in path
// order. A module with no such file is an error: the notice must be
// complete or not written at all.
func thirdPartyLicenses(bin, modCache string) ([]byte, error) {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("read build info of %s: %w", bin, err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "cardsync (module %s) is licensed under the Apache License 2.0 (LICENSE).\n", info.Main.Path)
	fmt.Fprintf(&b, "Its binary is built with %s, whose license is at https://go.dev/LICENSE,\n", info.GoVersion)
	b.WriteString("and statically links the modules below, each under the license that follows its name.\n")
	deps := slices.Clone(info.Deps)
	slices.SortFunc(deps, func(x, y *debug.Module) int { return strings.Compare(x.Path, y.Path) })
	for _, d := range deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		dir, err := moduleDir(modCache, m.Path, m.Version)
		if err != nil {
			return nil, err
		}
		files, err := licenseFiles(dir)
		if err != nil {
			return nil, fmt.Errorf("module %s %s: %w", m.Path, m.Version, err)
		}
		fmt.Fprintf(&b, "\n%s\n%s %s\n%s\n", strings.Repeat("=", 72), d.Path, m.Version, strings.Repeat("=", 72))
		for _, f := range files {
			text, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				return nil, fmt.Errorf("module %s %s: %w", m.Path, m.Version, err)
			}
			fmt.Fprintf(&b, "\n-- %s --\n\n%s", f, text)
			if !bytes.HasSuffix(text, []byte("\n")) {
				b.WriteByte('\n')
			}
		}
	}
	return b.Bytes(), nil
}

// moduleDir is where the module cache holds path@version, with the cache's
// case escaping (an upper-case letter becomes '!' and its lower case).
func moduleDir(modCache, path, version string) (string, error) {
	if modCache == "" {
		return "", errors.New("no module cache directory (go env GOMODCACHE)")
	}
	var esc strings.Builder
	for _, r := range path + "@" + version {
		if unicode.IsUpper(r) {
			esc.WriteByte('!')
			r = unicode.ToLower(r)
		}
		esc.WriteRune(r)
	}
	dir := filepath.Join(modCache, filepath.FromSlash(esc.String()))
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("module %s %s is not in the module cache at %s (go mod download)", path, version, dir)
	}
	return dir, nil
}

// licenseFiles lists the license and notice files at the top of a module's
// directory, sorted; none is an error.
func licenseFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		up := strings.ToUpper(e.Name())
		for _, p := range []string{"LICENSE", "LICENCE", "COPYING", "NOTICE", "PATENTS"} {
			if strings.HasPrefix(up, p) && e.Type().IsRegular() {
				out = append(out, e.Name())
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no LICENSE, COPYING or NOTICE file in %s", dir)
	}
	slices.Sort(out)
	return out, nil
}
