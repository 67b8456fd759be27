package schema

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
)

// Migration is one numbered migration file.
type Migration struct {
	Version int    // NNN of the file name
	Name    string // the file name, NNN_name.sql
	SQL     string
}

var migrationName = regexp.MustCompile(`^(\d{3})_[a-z0-9_]+\.sql$`)

// List reads the migration files NNN_name.sql in dir of fsys (Migrations
// with ".", Postgres with "postgres"), in order, and checks that they are
// numbered 1, 2, 3... without a gap or a repeat.
func List(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %q: want NNN_name.sql", e.Name())
		}
		n, _ := strconv.Atoi(m[1])
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read migration: %w", err)
		}
		out = append(out, Migration{Version: n, Name: e.Name(), SQL: string(b)})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: want number %03d", m.Name, i+1)
		}
	}
	return out, nil
}
