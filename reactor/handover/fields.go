package handover

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The field primitives every record is written and read with: a field is
// tag:2 | length:4 | value, little-endian; a record is a field whose
// value is fields again.

// optional marks a tag a reader may skip.
const optional = 0x8000

// ErrState says an encoded state could not be read.
var ErrState = errors.New("bad session hand-over state")

// fieldWriter appends fields to b.
type fieldWriter struct{ b []byte }

func (w *fieldWriter) bytes(tag uint16, v []byte) {
	w.b = binary.LittleEndian.AppendUint16(w.b, tag)
	w.b = binary.LittleEndian.AppendUint32(w.b, uint32(len(v)))
	w.b = append(w.b, v...)
}

func (w *fieldWriter) str(tag uint16, v string) { w.bytes(tag, []byte(v)) }

func (w *fieldWriter) u64(tag uint16, v uint64) {
	w.bytes(tag, binary.LittleEndian.AppendUint64(nil, v))
}

// flag writes a field only when v is set.
func (w *fieldWriter) flag(tag uint16, v bool) {
	if v {
		w.bytes(tag, []byte{1})
	}
}

// record writes a nested record that fill writes.
func (w *fieldWriter) record(tag uint16, fill func(*fieldWriter)) {
	var inner fieldWriter
	fill(&inner)
	w.bytes(tag, inner.b)
}

// eachField calls f with each field of b; f returns false for a tag it
// does not know. Unknown optional tags are skipped, unknown required ones
// refused.
func eachField(b []byte, f func(tag uint16, v []byte) (bool, error)) error {
	for len(b) > 0 {
		if len(b) < 6 {
			return fmt.Errorf("%w: truncated field", ErrState)
		}
		tag := binary.LittleEndian.Uint16(b)
		n := binary.LittleEndian.Uint32(b[2:])
		if uint64(n) > uint64(len(b)-6) {
			return fmt.Errorf("%w: field %#x runs past the end", ErrState, tag)
		}
		v := b[6 : 6+n]
		b = b[6+n:]
		known, err := f(tag, v)
		if err != nil {
			return err
		}
		if !known && tag&optional == 0 {
			return fmt.Errorf("%w: field %#x is not known to this obgate", ErrState, tag)
		}
	}
	return nil
}

func fieldU64(tag uint16, v []byte) (uint64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: field %#x has %d bytes, want 8", ErrState, tag, len(v))
	}
	return binary.LittleEndian.Uint64(v), nil
}

// fieldI64 reads a u64 field as the int64 it was written from.
func fieldI64(tag uint16, v []byte) (int64, error) {
	x, err := fieldU64(tag, v)
	return int64(x), err
}

// fieldU32 reads a u64 field that must fit 32 bits.
func fieldU32(tag uint16, v []byte) (uint32, error) {
	x, err := fieldU64(tag, v)
	if err == nil && x > 1<<32-1 {
		err = fmt.Errorf("%w: field %#x out of range", ErrState, tag)
	}
	return uint32(x), err
}

func fieldU16(tag uint16, v []byte) (uint16, error) {
	x, err := fieldU64(tag, v)
	if err == nil && x > 1<<16-1 {
		err = fmt.Errorf("%w: field %#x out of range", ErrState, tag)
	}
	return uint16(x), err
}

func fieldFlag(tag uint16, v []byte) (bool, error) {
	if len(v) != 1 || v[0] > 1 {
		return false, fmt.Errorf("%w: field %#x is not a flag", ErrState, tag)
	}
	return v[0] == 1, nil
}
