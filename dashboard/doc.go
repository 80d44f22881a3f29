// Package dashboard is hyperflat's read-only web UI over a results store (hyperflat serve).
//
// A Server renders the store's runs (experiment, preset, options, status, cells done, failed
// and running, wall time) and, for one run, its headline tables as hyperflat report prints
// them, its failed cells with their reasons, the activity of every worker, the experiment's
// figures drawn from the stored tables, and a CSV and JSON download of every table. The pages
// are rendered on the server, so they work without JavaScript; a small embedded script keeps
// them live through server-sent events (/events) while workers fill the store, and the same
// data is served as JSON under /api/. Nothing is fetched from the network: styles, script and
// figures come from the binary and the store.
//
// A run's page opens with its answer as the terminal prints it (the sentence, the table, the
// legend); while the run computes, with its partial results instead: per method the cells
// finished and the best objective so far, kept live by the event stream. Interactive views
// follow, drawn in the browser by the embedded Apache ECharts (assets/static/vendor, pinned by
// web/package-lock.json) from JSON computed here, under /api/runs/ID/VIEW: views (what the
// run's trials hold), history (best so far per method: median and quartiles over repeats),
// importance (first-order functional ANOVA by binning, deterministic), slices (the points of
// the slice and parallel-coordinates views), trials (every trial, every hyperparameter and
// stored number a column; sorted, filtered and paged here), curves (per-step learning
// curves), screenings (AHSC's screening score against the final metrics, Spearman's ρ), gap
// (weightdecay's Figure 4.3) and signals (each white-box signal of run ahsc --whitebox against
// the test metric, Spearman's ρ). The trials are read from the cells by one rule for every
// experiment (trials.go), so a number added to the evaluations appears as a column, and a
// record nested in an evaluation ("whitebox": {...}) as key_member columns. Each view
// is bounded: past its bound it keeps every k-th point and says so. /compare?a=ID&b=ID shows
// two runs side by side.
//
// The Server never writes to the store, and should be given one opened with
// store.OpenReadOnly so that the database itself refuses writes too. Work per request is
// bounded however large a run is: runs are listed from the store's aggregate query, a run's
// cells are summarised once per change of its counts (and at most every few seconds), and
// long lists (failures, table rows) are paginated or cut.
//
// With Config.Token set, every request must carry the token: an Authorization: Bearer header,
// a token query parameter (which sets a cookie, so that the page's links and event stream
// work), or that cookie. The store's DSN is shown with its password masked.
package dashboard
