package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hyperflat/hyperflat/store"
)

// Checkpoint keeps a long cell's progress across the deaths of the workers computing it: the
// cell saves what it has done so far, and the next attempt at it (another worker, once the
// dead one's lease expired) goes on from there instead of starting over. What a cell saves must
// let it compute exactly the result it would have computed uninterrupted. A cell finds its
// checkpoint with CheckpointOf.
type Checkpoint interface {
	// Saved is what an earlier attempt at the cell saved last, or nil. Progress saved by
	// another code version (CodeVersion) is not offered: the cell starts over.
	Saved() json.RawMessage
	// Save records the cell's progress, replacing what it saved before. Writes are spaced at
	// least CheckpointInterval apart; a save within that interval is written by the next one,
	// by the cell's next heartbeat, or when its worker is interrupted.
	Save(ctx context.Context, progress json.RawMessage) error
}

// CheckpointInterval is the least time between two writes of a cell's progress to the store.
const CheckpointInterval = 10 * time.Second

type checkpointKey struct{}

// WithCheckpoint returns a context whose cell saves its progress to cp.
func WithCheckpoint(ctx context.Context, cp Checkpoint) context.Context {
	return context.WithValue(ctx, checkpointKey{}, cp)
}

// CheckpointOf returns the checkpoint of the cell computed under ctx: the store's for a
// stored run's cell, and otherwise one that has nothing saved and saves nothing.
func CheckpointOf(ctx context.Context) Checkpoint {
	if cp, ok := ctx.Value(checkpointKey{}).(Checkpoint); ok {
		return cp
	}
	return noCheckpoint{}
}

type noCheckpoint struct{}

func (noCheckpoint) Saved() json.RawMessage                      { return nil }
func (noCheckpoint) Save(context.Context, json.RawMessage) error { return nil }

// savedProgress is what the store keeps of a cell's progress: the progress, the code version
// that wrote it, and the seconds the cell had been computed when it was saved, over this
// attempt and the earlier ones whose progress it went on from (absent in records written
// before the field).
type savedProgress struct {
	CodeVersion string          `json:"code_version"`
	Progress    json.RawMessage `json:"progress"`
	Seconds     float64         `json:"seconds,omitempty"`
}

// SavedRecord unwraps a cell's progress as the store keeps it (store.Store.SavedProgress): the
// progress the cell saved through its Checkpoint.
func SavedRecord(stored json.RawMessage) (json.RawMessage, error) {
	var sp savedProgress
	if err := json.Unmarshal(stored, &sp); err != nil {
		return nil, fmt.Errorf("experiments: a cell's saved progress: %w", err)
	}
	return sp.Progress, nil
}

// storeCheckpoint is the checkpoint of a stored run's cell, held by the lease l.
type storeCheckpoint struct {
	s     *store.Store
	l     *store.Lease
	saved json.RawMessage
	// start is when this attempt began; carried the seconds of the earlier attempts up to
	// saved (zero when nothing was offered).
	start   time.Time
	carried float64

	mu             sync.Mutex
	pending        json.RawMessage // saved by the cell, not yet written
	pendingSeconds float64         // the cell's seconds when it saved pending
	written        time.Time
}

// newStoreCheckpoint offers the lease's stored progress if this code version wrote it.
func newStoreCheckpoint(s *store.Store, l *store.Lease) *storeCheckpoint {
	c := &storeCheckpoint{s: s, l: l, start: time.Now()}
	var sp savedProgress
	if l.Progress != nil && json.Unmarshal(l.Progress, &sp) == nil && sp.CodeVersion == CodeVersion() {
		c.saved, c.carried = sp.Progress, sp.Seconds
	}
	return c
}

// seconds is the time the cell has been computed: this attempt's, and the earlier attempts' up
// to the progress it went on from (what they computed after it is computed again, and counts
// once).
func (c *storeCheckpoint) seconds() float64 { return c.carried + time.Since(c.start).Seconds() }

func (c *storeCheckpoint) Saved() json.RawMessage { return c.saved }

func (c *storeCheckpoint) Save(ctx context.Context, progress json.RawMessage) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending, c.pendingSeconds = progress, c.seconds()
	if time.Since(c.written) < CheckpointInterval {
		return nil
	}
	return c.flushLocked(ctx)
}

// flush writes the progress saved since the last write, if any. A lost lease is not an error
// here: the heartbeat reports it.
func (c *storeCheckpoint) flush(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flushLocked(ctx)
}

func (c *storeCheckpoint) flushLocked(ctx context.Context) error {
	if c.pending == nil {
		return nil
	}
	b, err := json.Marshal(savedProgress{CodeVersion: CodeVersion(), Progress: c.pending, Seconds: c.pendingSeconds})
	if err != nil {
		return fmt.Errorf("checkpoint of %s: %w", c.l, err)
	}
	if err := c.s.SaveProgress(ctx, c.l, b); err != nil && !errors.Is(err, store.ErrLeaseLost) {
		return err
	}
	c.pending, c.written = nil, time.Now()
	return nil
}
