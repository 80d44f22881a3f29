package dashboard

import (
	"bytes"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/all"
	"github.com/hyperflat/hyperflat/store"
)

//go:embed assets
var assets embed.FS

// Config configures a Server. The zero value serves every registered experiment, without a
// token, polling the store every second.
type Config struct {
	// Token, when set, must come with every request (see the package documentation).
	Token string
	// Experiments draws the runs' figures; nil is every registered experiment.
	Experiments experiments.Registry
	// Options summarises a run's options for the runs list; nil shows its preset and seed.
	Options func(store.Run) string
	// DSN names the store in the page header, its password masked; "" is the store's own DSN.
	DSN string
	// Poll is how often the live views read the store again; 0 is one second.
	Poll time.Duration
	// CacheDir is where figures are drawn; "" is a temporary directory that Close removes.
	CacheDir string
	// MaxStreams bounds the live event streams open at once (each is a browser tab); the
	// ones past it are answered 503 with the reason. 0 is DefaultMaxStreams.
	MaxStreams int
}

// DefaultMaxStreams is Config.MaxStreams's default: tabs enough for a team watching runs,
// few enough that their polls leave the store's connections to the pages.
const DefaultMaxStreams = 64

// Server is the dashboard's http.Handler. Its methods are safe for concurrent use.
type Server struct {
	st       *store.Store
	cfg      Config
	mux      *http.ServeMux
	pages    *template.Template
	cacheDir string
	ownCache bool
	done     chan struct{}
	close    sync.Once
	// streams holds a value per open event stream; runsRead and cellsRead, of capacity one,
	// are held by the one stream that reads the runs or a run's cells for all of them.
	streams, runsRead, cellsRead, detailRead, runRead chan struct{}

	mu       sync.Mutex
	runsAt   time.Time // when runsMemo was read
	runsMemo []runView
	options  map[int64]string
	results  map[int64]*resultEntry
	cells    map[int64]*cellsEntry
	details  map[int64]detailEntry
	runs     map[int64]runEntry
	// trials are the runs' parsed trials, updated by the holder of cellsRead.
	trials map[int64]*trialSet
}

// cookieName holds the token once a ?token= URL has been opened.
const cookieName = "hyperflat_token"

// New makes a Server over st, which it only reads; give it a store opened with
// store.OpenReadOnly. Close releases what New made.
func New(st *store.Store, cfg Config) (*Server, error) {
	if st == nil {
		return nil, errors.New("dashboard: no store")
	}
	if cfg.Experiments == nil {
		cfg.Experiments = all.Experiments()
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.DSN == "" {
		cfg.DSN = st.DSN()
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	pages, err := template.New("").Funcs(funcs).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("dashboard: templates: %w", err)
	}
	s := &Server{st: st, cfg: cfg, pages: pages, cacheDir: cfg.CacheDir, done: make(chan struct{}),
		streams: make(chan struct{}, cfg.MaxStreams), runsRead: make(chan struct{}, 1), cellsRead: make(chan struct{}, 1),
		detailRead: make(chan struct{}, 1), details: map[int64]detailEntry{}, runs: map[int64]runEntry{}, runRead: make(chan struct{}, 1),
		options: map[int64]string{}, results: map[int64]*resultEntry{}, cells: map[int64]*cellsEntry{}, trials: map[int64]*trialSet{}}
	if s.cacheDir == "" {
		if s.cacheDir, err = os.MkdirTemp("", "hyperflat-serve-*"); err != nil {
			return nil, fmt.Errorf("dashboard: figure cache: %w", err)
		}
		s.ownCache = true
	}
	static, err := fs.Sub(assets, "assets/static")
	if err != nil {
		return nil, err
	}
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.handleRuns)
	m.HandleFunc("GET /runs/{id}", s.handleRun)
	m.HandleFunc("GET /runs/{id}/report.txt", s.handleReportText)
	m.HandleFunc("GET /runs/{id}/tables/{file}", s.handleTable)
	m.HandleFunc("GET /runs/{id}/figures/{file}", s.handleFigure)
	m.HandleFunc("GET /api/runs", s.handleAPIRuns)
	m.HandleFunc("GET /api/runs/{id}", s.handleAPIRun)
	m.HandleFunc("GET /api/runs/{id}/{view}", s.handleView)
	m.HandleFunc("GET /compare", s.handleCompare)
	m.HandleFunc("GET /favicon.ico", serveFavicon)
	m.HandleFunc("GET /events", s.handleEvents)
	m.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux = m
	return s, nil
}

// Close ends the live event streams (an http.Server's Shutdown waits for them otherwise) and
// removes the figure cache New made.
func (s *Server) Close() error {
	var err error
	s.close.Do(func() {
		close(s.done)
		if s.ownCache {
			err = os.RemoveAll(s.cacheDir)
		}
	})
	return err
}

// ServeHTTP checks the token, then serves the page.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Everything is served from here; nothing may load from elsewhere or frame the pages.
	// Inline styles are allowed (never inline script): the charting library styles its
	// tooltips' markup with them.
	h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if s.cfg.Token == "" && !loopbackHost(r.Host) {
		// Without a token the server is meant for this machine only; a page elsewhere whose
		// name was re-pointed at 127.0.0.1 (DNS rebinding) would otherwise read it.
		http.Error(w, fmt.Sprintf("hyperflat serve: host %q is not this machine's loopback; a dashboard reachable under other names needs --token", r.Host), http.StatusForbidden)
		return
	}
	if s.cfg.Token != "" && !s.authorized(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// loopbackHost reports whether a Host header names this machine's loopback interface.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// authorized reports whether r carries the token, answering 401 (none) or 403 (a wrong one)
// if not. A token given in the URL is moved into a cookie, so that the page's own links,
// images and event stream (which cannot set headers) carry it.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	got, fromQuery := "", false
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, _ := strings.Cut(h, " ")
		if strings.EqualFold(scheme, "Bearer") {
			got = strings.TrimSpace(tok)
		}
	} else if q := r.URL.Query().Get("token"); q != "" {
		got, fromQuery = q, true
	} else if c, err := r.Cookie(cookieName); err == nil {
		got = c.Value
	}
	if got == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="hyperflat"`)
		http.Error(w, "hyperflat serve: this dashboard needs its token: send Authorization: Bearer TOKEN, or open the URL with ?token=TOKEN", http.StatusUnauthorized)
		return false
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) != 1 {
		http.Error(w, "hyperflat serve: wrong token", http.StatusForbidden)
		return false
	}
	if fromQuery {
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: got, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	}
	return true
}

// page is what every template gets.
type page struct {
	Title string
	DSN   string
	Data  any
	// Charts loads the charting library and the views' script.
	Charts bool
}

func (s *Server) render(w http.ResponseWriter, name, title string, data any) {
	var buf bytes.Buffer
	// Rendered whole before anything is sent, so that a template error is a clean 500.
	err := s.pages.ExecuteTemplate(&buf, name, page{Title: title, DSN: store.MaskDSN(s.cfg.DSN), Data: data,
		Charts: name == "run.html" || name == "compare.html"})
	if err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(append(b, '\n'))
}

// fail answers an error: 404 for a run or table that does not exist, 500 otherwise. Store
// errors mask passwords already.
func (s *Server) fail(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, errNoSuch) {
		code = http.StatusNotFound
	}
	http.Error(w, "hyperflat serve: "+err.Error(), code)
}

// errNoSuch is wrapped by errors about a table or figure that a run does not have.
var errNoSuch = errors.New("not found")

func runID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("run %q: %w", r.PathValue("id"), errNoSuch)
	}
	return id, nil
}

func (s *Server) handleRuns(w http.ResponseWriter, r *http.Request) {
	runs, err := s.sharedRunViews(r.Context()) // at most half a poll interval old
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, "runs.html", "runs", runs)
}

func (s *Server) handleAPIRuns(w http.ResponseWriter, r *http.Request) {
	runs, err := s.runViews(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, runs)
}

func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	id, err := runID(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	pageNo, _ := strconv.Atoi(r.URL.Query().Get("page"))
	d, err := s.runDetail(r.Context(), id, pageNo, forPage)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, "run.html", fmt.Sprintf("run %d (%s)", id, d.Run.Experiment), d)
}

func (s *Server) handleAPIRun(w http.ResponseWriter, r *http.Request) {
	id, err := runID(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	pageNo, _ := strconv.Atoi(r.URL.Query().Get("page"))
	d, err := s.runDetail(r.Context(), id, pageNo, forAPI)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, d)
}

func (s *Server) handleReportText(w http.ResponseWriter, r *http.Request) {
	res, err := s.resultOf(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	var buf bytes.Buffer
	if err := res.Write(&buf, "table"); err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write(buf.Bytes())
}

// resultOf is the stored result of the request's run.
func (s *Server) resultOf(r *http.Request) (*experiments.Result, error) {
	id, err := runID(r)
	if err != nil {
		return nil, err
	}
	e, err := s.result(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, fmt.Errorf("run %d has no assembled result yet: %w", id, errNoSuch)
	}
	return e.res, nil
}

func (s *Server) handleTable(w http.ResponseWriter, r *http.Request) {
	res, err := s.resultOf(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	file := r.PathValue("file")
	name, format := file, ""
	for _, ext := range []string{"csv", "json"} {
		if n, ok := strings.CutSuffix(file, "."+ext); ok {
			name, format = n, ext
		}
	}
	t := res.Table(name)
	if t == nil || format == "" {
		s.fail(w, fmt.Errorf("table file %q (want NAME.csv or NAME.json of one of the run's tables): %w", file, errNoSuch))
		return
	}
	var buf bytes.Buffer
	if format == "csv" {
		err = t.WriteCSV(&buf)
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	} else {
		err = writeTableJSON(&buf, t)
		w.Header().Set("Content-Type", "application/json")
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="run%s_%s"`, r.PathValue("id"), file))
	w.Write(buf.Bytes())
}

func (s *Server) handleFigure(w http.ResponseWriter, r *http.Request) {
	id, err := runID(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	e, err := s.result(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return
	}
	if e == nil {
		s.fail(w, fmt.Errorf("run %d has no figures yet: %w", id, errNoSuch))
		return
	}
	f, ok := e.figures(s).lookup(r.PathValue("file"))
	if !ok {
		s.fail(w, fmt.Errorf("figure %q of run %d: %w", r.PathValue("file"), id, errNoSuch))
		return
	}
	w.Header().Set("Cache-Control", "private, max-age=3600")
	if f.svg != nil {
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Write(f.svg)
		return
	}
	file, err := os.Open(f.path)
	if err != nil {
		s.fail(w, err)
		return
	}
	defer file.Close()
	w.Header().Set("Content-Type", "image/png")
	http.ServeContent(w, r, f.Name, time.Time{}, file)
}

// handleEvents streams server-sent events: "runs" (the runs list) or, with ?run=ID, "run"
// (that run's summary and workers), each time it changes. The store is polled: workers on
// other machines do not tell this process what they did.
//
// At most Config.MaxStreams streams are open at once; a client past them is told so (503,
// Retry-After) and its page works on without live updates.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	select {
	case s.streams <- struct{}{}:
		defer func() { <-s.streams }()
	default:
		w.Header().Set("Retry-After", "30")
		http.Error(w, fmt.Sprintf("hyperflat serve: %d live views are open, the most this server keeps; this page will not update by itself (reload it later, or close another tab)", s.cfg.MaxStreams), http.StatusServiceUnavailable)
		return
	}
	var snapshot func() (any, error)
	event := "runs"
	if q := r.URL.Query().Get("run"); q != "" {
		id, err := strconv.ParseInt(q, 10, 64)
		if err != nil {
			http.Error(w, "hyperflat serve: ?run= wants a run ID", http.StatusBadRequest)
			return
		}
		// The first snapshot, shared with the other streams of the run, says whether it exists.
		if _, err := s.sharedRunDetail(r.Context(), id); err != nil {
			s.fail(w, err)
			return
		}
		event = "run"
		snapshot = func() (any, error) { return s.sharedRunDetail(r.Context(), id) }
	} else {
		snapshot = func() (any, error) { return s.sharedRunViews(r.Context()) }
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")
	if err := rc.Flush(); err != nil { // the client knows at once that it has a stream
		return
	}
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	var last []byte
	quiet := time.Now()
	for {
		v, err := snapshot()
		var b []byte
		if err == nil {
			b, err = json.Marshal(v)
		}
		switch {
		case err != nil:
			if r.Context().Err() != nil {
				return
			}
			fmt.Fprintf(w, "event: failure\ndata: %s\n\n", strings.ReplaceAll(err.Error(), "\n", " "))
		case !bytes.Equal(b, last):
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
			last, quiet = b, time.Now()
		case time.Since(quiet) > 15*time.Second:
			// A comment keeps proxies from closing an idle stream.
			fmt.Fprint(w, ": idle\n\n")
			quiet = time.Now()
		}
		if err := rc.Flush(); err != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case <-tick.C:
		}
	}
}
