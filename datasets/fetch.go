package datasets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// FileState is what a data directory holds of a registry file.
type FileState int

const (
	// Missing: no file at the expected path.
	Missing FileState = iota
	// Present: a file of the recorded size and checksums.
	Present
	// Mismatch: a file whose size or checksum differs from the registry's.
	Mismatch
)

// String returns "missing", "present" or "checksum mismatch".
func (s FileState) String() string {
	switch s {
	case Present:
		return "present"
	case Mismatch:
		return "checksum mismatch"
	}
	return "missing"
}

// FileStatus is the state of one registry file in a data directory.
type FileStatus struct {
	File  File
	Path  string // where the file is expected
	State FileState
	Err   error // why a present file does not match, or why it could not be read
}

// Check reports the state of each file of the named registry dataset under dir, hashing the
// files that are there (which reads them whole).
func Check(ctx context.Context, name, dir string) ([]FileStatus, error) {
	if ctx == nil {
		return nil, errNilContext
	}
	in, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("datasets: unknown dataset %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	out := make([]FileStatus, len(in.Files))
	for i, f := range in.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		out[i] = FileStatus{File: f, Path: p}
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := verifyFile(ctx, p, f); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			out[i].State, out[i].Err = Mismatch, err
			continue
		}
		out[i].State = Present
	}
	return out, nil
}

// verifyFile checks the file at p against the registry's size and checksums.
func verifyFile(ctx context.Context, p string, f File) error {
	o := &opener{ctx: ctx, dir: filepath.Dir(p), files: []File{{Path: filepath.Base(p), Size: f.Size, SHA256: f.SHA256, MD5: f.MD5}}}
	v, err := o.open(0)
	if err != nil {
		return err
	}
	// open checked the size and checksums before returning (opener.precheck).
	return v.closer.Close()
}

// ErrNotDownloadable is matched (errors.Is) by Fetch's error for a file that the registry's
// Source names no URL of: it comes from a package, a distribution, or is derived from
// another file (Info.Notes says how).
var ErrNotDownloadable = errors.New("no download URL in the registry")

// FileURLs returns where a registry file can be downloaded from, best first: the Source
// when it is the file's own URL, or the file's name under a Source (or "mirror:") folder.
// It is empty when Source names no such URL.
func FileURLs(in Info, f File) []string {
	fields := strings.Fields(in.Source)
	var urls []string
	for i, tok := range fields {
		// Only the Source itself or a named mirror: a URL inside prose (a project page, a
		// distribution's home) is not where the file is.
		if i > 0 && fields[i-1] != "(mirror:" && fields[i-1] != "mirror:" {
			continue
		}
		tok = strings.TrimRight(tok, "),;")
		if !strings.HasPrefix(tok, "https://") && !strings.HasPrefix(tok, "http://") {
			continue
		}
		// A GitHub folder page lists the files; /raw/ serves them.
		if strings.HasPrefix(tok, "https://github.com/") {
			tok = strings.Replace(tok, "/tree/", "/raw/", 1)
		}
		base := path.Base(f.Path)
		switch {
		case strings.HasSuffix(tok, "/"):
			urls = append(urls, tok+base)
		case path.Base(tok) == base:
			urls = append(urls, tok)
		}
	}
	return urls
}

// FetchOptions configure Fetch.
type FetchOptions struct {
	// URLs returns where to download a file from, tried in order; nil uses FileURLs (a test
	// points it at a local server).
	URLs func(Info, File) []string
	// Client makes the requests; nil uses http.DefaultClient.
	Client *http.Client
	// Progress, when set, is called as a file's bytes arrive: done of total bytes, done
	// counting those resumed from an earlier partial download.
	Progress func(f File, done, total int64)
}

// Fetch downloads the named registry dataset's files into dir (see [ResolveDir]), skipping
// those already present and intact. Each download goes into PATH.part, is checked against
// the registry's size and checksums, and only then renamed to PATH, so that PATH is never a
// partial or corrupt file. An interrupted download is resumed from its .part file with an
// HTTP Range request; a download that does not match is deleted, .part included. It returns
// the paths it downloaded.
func Fetch(ctx context.Context, name, dir string, opt FetchOptions) ([]string, error) {
	if ctx == nil {
		return nil, errNilContext
	}
	in, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("datasets: unknown dataset %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	status, err := Check(ctx, name, dir)
	if err != nil {
		return nil, err
	}
	urlsOf := opt.URLs
	if urlsOf == nil {
		urlsOf = FileURLs
	}
	client := opt.Client
	if client == nil {
		client = http.DefaultClient
	}
	var fetched []string
	for _, st := range status {
		if st.State == Present {
			continue
		}
		urls := urlsOf(in, st.File)
		if len(urls) == 0 {
			hint := "obtain it from " + in.Source
			if in.Notes != "" {
				hint += " (" + in.Notes + ")"
			}
			return fetched, fmt.Errorf("datasets: %s: %s: %w; %s and place it at %s", name, path.Base(st.File.Path), ErrNotDownloadable, hint, st.Path)
		}
		var errs []error
		for _, u := range urls {
			err := download(ctx, client, u, st.Path, st.File, opt.Progress)
			if err == nil {
				errs = nil
				break
			}
			if ctx.Err() != nil {
				return fetched, fmt.Errorf("datasets: %s: downloading %s: %w", name, u, ctx.Err())
			}
			errs = append(errs, fmt.Errorf("%s: %w", u, err))
		}
		if errs != nil {
			return fetched, fmt.Errorf("datasets: %s: downloading %s: %w", name, path.Base(st.File.Path), errors.Join(errs...))
		}
		fetched = append(fetched, st.Path)
	}
	return fetched, nil
}

// download fetches url into target through target.part, resuming what the .part holds.
func download(ctx context.Context, client *http.Client, url, target string, f File, progress func(File, int64, int64)) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	part := target + ".part"
	have := int64(0)
	if fi, err := os.Lstat(part); err == nil {
		if fi.Mode().IsRegular() && (f.Size == 0 || fi.Size() <= f.Size) {
			have = fi.Size()
		} else if err := os.Remove(part); err != nil {
			return err
		}
	}
	resumed := have > 0
	for {
		if f.Size == 0 || have < f.Size {
			var err error
			if have, err = get(ctx, client, url, part, have, f, progress); err != nil {
				return err
			}
		}
		err := verifyFile(ctx, part, f)
		if err == nil {
			return os.Rename(part, target)
		}
		if ctx.Err() != nil {
			return err
		}
		// A wrong file is not worth resuming: the next try starts afresh. When this one
		// was resumed, the old part may be what is wrong, so try once more from the start.
		os.Remove(part)
		if !resumed {
			return err
		}
		resumed, have = false, 0
	}
}

// get appends url's bytes from offset have to the file part (or rewrites it when the server
// ignores the range) and returns how many bytes part holds.
func get(ctx context.Context, client *http.Client, url, part string, have int64, f File, progress func(File, int64, int64)) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return have, err
	}
	if have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	resp, err := client.Do(req)
	if err != nil {
		return have, err
	}
	defer resp.Body.Close()
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
	case resp.StatusCode == http.StatusOK:
		flags, have = os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0 // the whole file again
	default:
		return have, fmt.Errorf("HTTP %s", resp.Status)
	}
	out, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return have, err
	}
	var body io.Reader = resp.Body
	if f.Size > 0 {
		// A byte past the recorded size is enough to reject a longer file.
		body = io.LimitReader(body, f.Size-have+1)
	}
	w := &counter{w: out, n: have, f: f, progress: progress}
	_, err = io.Copy(w, body)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return w.n, err
}

// counter counts the bytes written through it and reports them.
type counter struct {
	w        io.Writer
	n        int64
	f        File
	progress func(File, int64, int64)
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if c.progress != nil {
		c.progress(c.f, c.n, c.f.Size)
	}
	return n, err
}
