// Package store keeps the results of experiment runs in SQLite or PostgreSQL, so that a run can
// be split into deterministic cells, worked on by many processes on many machines, resumed after
// a crash, and assembled into tables afterwards.
//
// A run (CreateRun) is identified by the hash of everything that determines its results and
// holds one row per cell, all pending at first. Workers take cells with Claim, which leases the
// lowest claimable cell (pending, or running with an expired lease) to one worker; they keep the
// lease with Heartbeat and end it with Complete (the outcome, committed atomically), Fail or
// Release. A lease whose worker died expires and the cell is claimed again with the next Attempt
// number. Lease times are read from the database's clock, never the caller's, so workers whose
// clocks disagree still agree on who holds a cell.
//
// Open takes "postgres://..." (or "postgresql://...") or a libpq key=value string ("host=… user=…
// password=… dbname=…") for PostgreSQL, through pgx's database/sql driver, and "sqlite://PATH",
// "file:PATH" (a URI: the path percent-decoded) or a plain PATH for an embedded SQLite file (pure Go,
// modernc.org/sqlite) in WAL mode with immediate write transactions and a long busy timeout, so
// that several processes on one machine can share it. Both use the same SQL; the schema is
// created on first Open and versioned in the table schema_version. Passwords never appear in
// what the package prints or returns: Store.DSN and every error mask them (MaskDSN). SQLiteDSN
// turns any file path, one with a "?" in a directory name included, into a DSN that opens
// exactly that file.
//
// Times are stored as seconds since the Unix epoch (double precision), uint64 seeds as decimal
// text, and JSON documents as text, so they round-trip byte for byte. Metrics are stored as a
// JSON object in which NaN and ±Inf are the strings "NaN", "+Inf" and "-Inf".
package store
