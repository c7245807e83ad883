package db

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"

	"github.com/resolute-ml/resolute/db/gen"
)

// contextChunkBytes is the size of the chunks a context directory is kept
// in: what the master holds of one at a time.
const contextChunkBytes = 1 << 20

// storeChunks reads r to its end and hands it to put in chunks numbered
// from 0. The buffer is reused: put must be done with it when it returns.
func storeChunks(r io.Reader, put func(seq int32, data []byte) error) error {
	buf := make([]byte, contextChunkBytes)
	for seq := int32(0); ; seq++ {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if err := put(seq, buf[:n]); err != nil {
				return err
			}
		}
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil
		case err != nil:
			return fmt.Errorf("read the context: %w", err)
		}
	}
}

// chunkReader reads a context directory a chunk at a time through get,
// which returns pgx.ErrNoRows past the last one.
type chunkReader struct {
	get  func(seq int32) ([]byte, error)
	what string
	seq  int32
	buf  []byte
	err  error
}

// Read implements io.Reader.
func (c *chunkReader) Read(p []byte) (int, error) {
	for len(c.buf) == 0 && c.err == nil {
		c.buf, c.err = c.get(c.seq)
		c.seq++
		if errors.Is(c.err, pgx.ErrNoRows) {
			c.err = io.EOF
		} else if c.err != nil {
			c.err = translate(c.err, "%s", c.what)
		}
	}
	if len(c.buf) == 0 {
		return 0, c.err
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

// ExperimentContext reads the tar.gz of an experiment's context directory
// from the database a chunk at a time; one without a context reads as
// empty. Database errors come from Read.
func (q *Queries) ExperimentContext(ctx context.Context, id int64) io.Reader {
	return &chunkReader{what: fmt.Sprintf("context of experiment %d", id), get: func(seq int32) ([]byte, error) {
		return q.q.GetExperimentContextChunk(ctx, gen.GetExperimentContextChunkParams{ExperimentID: id, Seq: seq})
	}}
}

// TaskContext reads a task's uploaded context directory (tar.gz) as
// ExperimentContext reads an experiment's.
func (q *Queries) TaskContext(ctx context.Context, id string) io.Reader {
	return &chunkReader{what: "context of task " + id, get: func(seq int32) ([]byte, error) {
		return q.q.GetTaskContextChunk(ctx, gen.GetTaskContextChunkParams{TaskID: id, Seq: seq})
	}}
}

// storeExperimentContext stores an experiment's context: r's, else (with
// from) that of experiment from, copied inside the database.
func (q *Queries) storeExperimentContext(ctx context.Context, id int64, r io.Reader, from *int64) error {
	var err error
	switch {
	case r != nil:
		err = storeChunks(r, func(seq int32, data []byte) error {
			return q.q.CreateExperimentContextChunk(ctx, gen.CreateExperimentContextChunkParams{ExperimentID: id, Seq: seq, Data: data})
		})
	case from != nil:
		err = q.q.CopyExperimentContext(ctx, gen.CopyExperimentContextParams{ToID: id, FromID: *from})
	}
	return translate(err, "context of experiment %d", id)
}

// storeTaskContext stores a task's context from r (nil: none).
func (q *Queries) storeTaskContext(ctx context.Context, id string, r io.Reader) error {
	if r == nil {
		return nil
	}
	err := storeChunks(r, func(seq int32, data []byte) error {
		return q.q.CreateTaskContextChunk(ctx, gen.CreateTaskContextChunkParams{TaskID: id, Seq: seq, Data: data})
	})
	return translate(err, "context of task %s", id)
}
