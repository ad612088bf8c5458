package maps

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// batchSize bounds the entries per batch syscall. Hash maps answer ENOSPC when
// one bucket holds more than a batch; 256 is far above any bucket here.
const batchSize = 256

// readAll returns every entry of a hash or array map. It uses batch lookups
// and falls back to iteration on kernels without them.
func readAll[K, V any](m *ebpf.Map) ([]K, []V, error) {
	var (
		keys   []K
		vals   []V
		cursor ebpf.MapBatchCursor
		kbuf   = make([]K, batchSize)
		vbuf   = make([]V, batchSize)
	)
	for {
		n, err := m.BatchLookup(&cursor, kbuf, vbuf, nil)
		if errors.Is(err, ebpf.ErrNotSupported) && len(keys) == 0 {
			// Nothing was read, whatever the count says (see deleteAll).
			return iterateAll[K, V](m)
		}
		keys = append(keys, kbuf[:n]...)
		vals = append(vals, vbuf[:n]...)
		switch {
		case errors.Is(err, ebpf.ErrKeyNotExist):
			return keys, vals, nil
		case err != nil:
			return nil, nil, err
		}
	}
}

func iterateAll[K, V any](m *ebpf.Map) ([]K, []V, error) {
	var (
		keys []K
		vals []V
		k    K
		v    V
	)
	it := m.Iterate()
	for it.Next(&k, &v) {
		keys = append(keys, k)
		vals = append(vals, v)
	}
	if err := it.Err(); err != nil {
		return nil, nil, err
	}
	return keys, vals, nil
}

// readPerCPU returns every entry of a per-CPU array, one value per possible CPU.
func readPerCPU[V any](m *ebpf.Map, ncpu int) ([]uint32, [][]V, error) {
	var (
		keys   []uint32
		vals   [][]V
		cursor ebpf.MapBatchCursor
		kbuf   = make([]uint32, batchSize)
		vbuf   = make([]V, batchSize*ncpu)
	)
	for {
		n, err := m.BatchLookup(&cursor, kbuf, vbuf, nil)
		if errors.Is(err, ebpf.ErrNotSupported) && len(keys) == 0 {
			return iteratePerCPU[V](m)
		}
		for i := range n {
			keys = append(keys, kbuf[i])
			vals = append(vals, append([]V(nil), vbuf[i*ncpu:(i+1)*ncpu]...))
		}
		switch {
		case errors.Is(err, ebpf.ErrKeyNotExist):
			return keys, vals, nil
		case err != nil:
			return nil, nil, err
		}
	}
}

func iteratePerCPU[V any](m *ebpf.Map) ([]uint32, [][]V, error) {
	var (
		keys []uint32
		vals [][]V
		k    uint32
		v    []V
	)
	it := m.Iterate()
	for it.Next(&k, &v) {
		keys = append(keys, k)
		vals = append(vals, append([]V(nil), v...))
	}
	if err := it.Err(); err != nil {
		return nil, nil, err
	}
	return keys, vals, nil
}

// writeAll creates or replaces the entries. It returns the number written
// before an error (entries after that may or may not exist).
func writeAll[K, V any](m *ebpf.Map, keys []K, vals []V) error {
	for start := 0; start < len(keys); start += batchSize {
		end := min(start+batchSize, len(keys))
		_, err := m.BatchUpdate(keys[start:end], vals[start:end], nil)
		if errors.Is(err, ebpf.ErrNotSupported) {
			for i := start; i < end; i++ {
				if err := m.Update(keys[i], vals[i], ebpf.UpdateAny); errors.Is(err, unix.E2BIG) {
					return fmt.Errorf("map full (max_entries %d): %w", m.MaxEntries(), err)
				} else if err != nil {
					return fmt.Errorf("update %v: %w", keys[i], err)
				}
			}
			continue
		}
		if errors.Is(err, unix.E2BIG) {
			return fmt.Errorf("map full (max_entries %d): %w", m.MaxEntries(), err)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// deleteAll deletes the entries; missing keys are not an error.
func deleteAll[K any](m *ebpf.Map, keys []K) error {
	for start := 0; start < len(keys); start += batchSize {
		end := min(start+batchSize, len(keys))
		n, err := m.BatchDelete(keys[start:end], nil)
		if err == nil {
			continue
		}
		if !errors.Is(err, ebpf.ErrKeyNotExist) && !errors.Is(err, ebpf.ErrNotSupported) {
			return err
		}
		if errors.Is(err, ebpf.ErrNotSupported) {
			// A map type without batch ops (an LPM trie before 6.x) deletes nothing, and the kernel leaves the
			// count as passed in: on Debian 11's 5.10 trusting it left every sbr_table entry behind.
			n = 0
		}
		// A missing key stops the batch: finish one by one.
		for i := start + n; i < end; i++ {
			if err := m.Delete(keys[i]); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
				return fmt.Errorf("delete %v: %w", keys[i], err)
			}
		}
	}
	return nil
}
