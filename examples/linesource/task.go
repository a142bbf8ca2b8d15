package linesource

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/connectd/connectd/framework/sdk"
)

// Task reads its files from the committed line on.
type Task struct {
	topic    string
	batch    int
	pollWait time.Duration
	files    []*file
}

// file is one source partition.
type file struct {
	path      string
	partition map[string]any
	f         *os.File
	r         *bufio.Reader
	skip      int64  // committed lines still to skip after (re)opening
	line      int64  // lines turned into records so far
	partial   []byte // the start of a line whose newline is not written yet
}

// Start reads the committed offsets: for every file, the number of lines
// already written to Kafka.
func (t *Task) Start(_ context.Context, tctx sdk.SourceTaskContext, props map[string]string) error {
	t.topic = props[KeyTopic]
	t.batch = 500
	if v, ok := props[KeyBatch]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%s: %q is not a positive number", KeyBatch, v)
		}
		t.batch = n
	}
	t.pollWait = 200 * time.Millisecond
	if v, ok := props[KeyPollWait]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%s: %q is not a positive number", KeyPollWait, v)
		}
		t.pollWait = time.Duration(n) * time.Millisecond
	}
	paths, err := splitFiles(props[keyTaskFile])
	if err != nil {
		return fmt.Errorf("%s: %w", keyTaskFile, err)
	}
	for _, p := range paths {
		fs := &file{path: p, partition: map[string]any{"file": p}}
		if off := tctx.Offset(fs.partition); off != nil {
			n, ok := off["line"].(float64) // JSON numbers arrive as float64
			if !ok || n < 0 || n != float64(int64(n)) {
				return fmt.Errorf("committed offset %v of %s has no line count", off, p)
			}
			fs.skip, fs.line = int64(n), int64(n)
		}
		t.files = append(t.files, fs)
	}
	tctx.Logger().Info("lines task started", "files", len(t.files))
	return nil
}

// Poll returns up to batch.max.lines new complete lines per file. With
// nothing new it waits poll.wait.ms, so an idle task does not spin.
func (t *Task) Poll(ctx context.Context) ([]*sdk.SourceRecord, error) {
	var out []*sdk.SourceRecord
	for _, fs := range t.files {
		recs, err := t.read(fs)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	if len(out) == 0 {
		select {
		case <-ctx.Done():
		case <-time.After(t.pollWait):
		}
	}
	return out, nil
}

func (t *Task) read(fs *file) ([]*sdk.SourceRecord, error) {
	if fs.f == nil {
		f, err := os.Open(fs.path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil // not there yet: keep waiting for it
		}
		if err != nil {
			return nil, err // the framework fails the task and restarts it with backoff
		}
		fs.f, fs.r = f, bufio.NewReader(f)
	}
	var out []*sdk.SourceRecord
	for len(out) < t.batch {
		chunk, err := fs.r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			// Keep what there is of an unfinished line for the next poll.
			fs.partial = append(fs.partial, chunk...)
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", fs.path, err)
		}
		line := append(fs.partial, chunk[:len(chunk)-1]...)
		fs.partial = nil
		if fs.skip > 0 {
			fs.skip-- // committed before the restart
			continue
		}
		fs.line++
		out = append(out, &sdk.SourceRecord{
			SourcePartition: fs.partition,
			SourceOffset:    map[string]any{"line": fs.line},
			Topic:           t.topic,
			Partition:       sdk.AnyPartition,
			Key:             fs.path,
			Value:           string(line),
		})
	}
	return out, nil
}

// Commit needs to do nothing: the positions live in the framework's
// offsets, not in the files.
func (t *Task) Commit(context.Context, []sdk.SourceOffset) error { return nil }

// Stop closes the files.
func (t *Task) Stop(context.Context) error {
	var errs []error
	for _, fs := range t.files {
		if fs.f != nil {
			errs = append(errs, fs.f.Close())
		}
	}
	return errors.Join(errs...)
}
