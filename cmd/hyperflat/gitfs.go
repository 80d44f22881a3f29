package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing/fstest"
)

// Reading files of a git commit without a work tree (a bare mirror): git ls-tree lists the
// files under the asked paths, git cat-file --batch reads them in one process. Only the files
// Bayesmark's scorer reads are loaded (derived/eval.json, derived/baseline.json, eval/,
// suggest_log/), within a total bound.

// maxGitBytes bounds what one commit's read may load into memory.
const maxGitBytes = 2 << 30

// gitFS is the files of commit under the directories matching patterns (path.Match globs,
// matched against a path's leading components), and the commit's full hash.
func gitFS(ctx context.Context, gitDir, commit string, patterns []string) (fs.FS, string, []string, error) {
	git := func(stdin io.Reader, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir=" + gitDir}, args...)...)
		cmd.Stdin = stdin
		var errb bytes.Buffer
		cmd.Stderr = &errb
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(errb.String()))
		}
		return out, nil
	}
	if strings.HasPrefix(commit, "-") || strings.ContainsAny(commit, " \t\n") {
		return nil, "", nil, fmt.Errorf("%q is not a commit", commit)
	}
	full, err := git(nil, "rev-parse", "--verify", "--quiet", commit+"^{commit}")
	if err != nil {
		return nil, "", nil, fmt.Errorf("%s: no such commit in %s", commit, gitDir)
	}
	hash := strings.TrimSpace(string(full))
	list, err := git(nil, "ls-tree", "-r", "-l", "-z", hash)
	if err != nil {
		return nil, "", nil, err
	}
	type entry struct {
		path, sha string
		size      int64
	}
	var entries []entry
	roots := map[string]bool{}
	var total int64
	for _, rec := range bytes.Split(list, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, p, ok := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 || f[1] != "blob" {
			continue
		}
		root, match := matchPrefix(p, patterns)
		if !match || !wanted(p) {
			continue
		}
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			continue
		}
		total += size
		if total > maxGitBytes {
			return nil, "", nil, fmt.Errorf("%s: the files under %s exceed %d GiB", commit, strings.Join(patterns, ", "), maxGitBytes>>30)
		}
		roots[root] = true
		entries = append(entries, entry{p, f[2], size})
	}
	if len(entries) == 0 {
		return nil, "", nil, fmt.Errorf("%s: no Bayesmark file under %s", commit, strings.Join(patterns, ", "))
	}
	var in bytes.Buffer
	for _, e := range entries {
		in.WriteString(e.sha + "\n")
	}
	out, err := git(&in, "cat-file", "--batch")
	if err != nil {
		return nil, "", nil, err
	}
	m := fstest.MapFS{}
	r := bufio.NewReader(bytes.NewReader(out))
	for _, e := range entries {
		head, err := r.ReadString('\n')
		if err != nil {
			return nil, "", nil, fmt.Errorf("git cat-file: %s: %w", e.path, err)
		}
		f := strings.Fields(head)
		if len(f) != 3 || f[0] != e.sha {
			return nil, "", nil, fmt.Errorf("git cat-file: %s: unexpected header %q", e.path, strings.TrimSpace(head))
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || n != e.size {
			return nil, "", nil, fmt.Errorf("git cat-file: %s: size %s, ls-tree said %d", e.path, f[2], e.size)
		}
		data := make([]byte, n+1) // and the newline after the contents
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, "", nil, fmt.Errorf("git cat-file: %s: %w", e.path, err)
		}
		m[e.path] = &fstest.MapFile{Data: data[:n], Mode: 0o444}
	}
	var dirs []string
	for d := range roots {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	return m, hash, dirs, nil
}

// matchPrefix reports whether some leading components of p match a pattern, and which.
func matchPrefix(p string, patterns []string) (string, bool) {
	parts := strings.Split(p, "/")
	for _, pat := range patterns {
		pat = strings.Trim(pat, "/")
		n := strings.Count(pat, "/") + 1
		if n > len(parts)-1 {
			continue
		}
		prefix := path.Join(parts[:n]...)
		if ok, err := path.Match(pat, prefix); err == nil && ok {
			return prefix, true
		}
	}
	return "", false
}

// wanted keeps the files Bayesmark's scorer reads.
func wanted(p string) bool {
	dir, base := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	switch path.Base(dir) {
	case "derived":
		return base == "eval.json" || base == "baseline.json"
	case "eval", "suggest_log":
		return strings.HasSuffix(base, ".json")
	}
	return false
}
