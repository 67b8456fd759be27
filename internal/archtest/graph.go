package archtest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Module returns the module's path and root directory, as the go command in dir sees them.
func Module(ctx context.Context, dir string) (path, root string, err error) {
	out, err := goCmd(ctx, dir, "list", "-m", "-f", "{{.Path}} {{.Dir}}")
	if err != nil {
		return "", "", err
	}
	path, root, _ = strings.Cut(strings.TrimSpace(out), " ")
	return path, root, nil
}

// Imports lists the imports of every package of the module at root (its own files, tests aside)
// with `go list`; extra arguments (such as -overlay) go before the package pattern.
func Imports(ctx context.Context, root string, extra ...string) (Graph, error) {
	module, _, err := Module(ctx, root)
	if err != nil {
		return nil, err
	}
	args := append([]string{"list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}, extra...)
	out, err := goCmd(ctx, root, append(args, "./...")...)
	if err != nil {
		return nil, err
	}
	short := func(path string) string {
		if rel, ok := strings.CutPrefix(path, module+"/"); ok {
			return rel
		}
		return path
	}
	g := Graph{}
	for line := range strings.Lines(out) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		from := short(fields[0])
		g[from] = nil
		for _, to := range fields[1:] {
			g[from] = append(g[from], short(to))
		}
	}
	return g, nil
}

func goCmd(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}
