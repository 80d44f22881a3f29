package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/hyperflat/hyperflat/dashboard"
	"github.com/hyperflat/hyperflat/store"
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flags("serve")
	sf := addStoreFlags(fs, false)
	out := fs.String("out", "", "the --out directory of a run (its store is OUT/hyperflat.db)")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on; one off loopback needs --token")
	token := fs.String("token", "", "a secret every request must carry (Authorization: Bearer TOKEN, or ?token=TOKEN once in the browser)")
	if code, ok := parse(fs, "serve [--out DIR | --store DSN] [--addr 127.0.0.1:8080] [--token T]", args, stdout, stderr); !ok {
		return code
	}
	if !loopback(*addr) && *token == "" {
		fmt.Fprintf(stderr, "hyperflat serve: refusing to serve %s without --token: anyone who can reach that address could read the store (bind 127.0.0.1, or give --token)\n", *addr)
		return exitUsage
	}
	dsn := sf.dsn(*out)
	if dsn == "" {
		fmt.Fprintf(stderr, "hyperflat serve: name a store: --store DSN, --out DIR or $%s\n", EnvStore)
		return exitUsage
	}
	if err := storeExists(dsn); err != nil {
		fmt.Fprintf(stderr, "hyperflat serve: %v\n", err)
		return exitFailure
	}
	st, err := store.OpenReadOnly(ctx, dsn)
	if err != nil {
		fmt.Fprintf(stderr, "hyperflat serve: %v\n", err)
		return exitFailure
	}
	defer st.Close()
	if st.Snapshot() {
		fmt.Fprintf(stderr, "hyperflat serve: note: the store's directory cannot be written, so it is shown as it stood now; what workers store later will not show until serve is restarted\n")
	}
	dash, err := dashboard.New(st, dashboard.Config{Token: *token, Options: runOptions, DSN: dsn})
	if err != nil {
		fmt.Fprintf(stderr, "hyperflat serve: %v\n", err)
		return exitFailure
	}
	defer dash.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "hyperflat serve: %v\n", err)
		return exitFailure
	}
	// Idle keep-alive connections are closed, so that clients that went quiet hold nothing.
	srv := &http.Server{Handler: dash, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	u := "http://" + ln.Addr().String() + "/"
	if *token != "" {
		u += "?token=" + url.QueryEscape(*token)
	}
	fmt.Fprintf(stdout, "hyperflat serve: %s, read-only, at %s (Ctrl-C stops)\n", st.DSN(), u)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		dash.Close() // ends the event streams, which Shutdown would wait for
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = srv.Shutdown(sctx)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "hyperflat serve: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// loopback reports whether addr listens only on this machine: a loopback IP or "localhost".
// Anything else, an empty host (every interface) or another name included, is reachable from
// elsewhere as far as this check can tell.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
