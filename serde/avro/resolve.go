package avro

import (
	"fmt"
	"math/big"

	"github.com/kstreams-go/kstreams/serde/avro/internal/schema"
)

// resolve converts v, a goavro native value decoded with the writer schema w, into the
// native form of the reader schema r, following Avro schema resolution (the specification's
// "Schema Resolution", as Java's ResolvingDecoder applies it for SpecificDatumReader): reader
// fields missing from the writer take their default, writer fields the reader lacks are
// dropped, int/long/float promote, string and bytes convert, an unknown enum symbol takes
// the reader's enum default, and a writer branch maps to the first reader branch that can
// read it. It returns an error wrapping errMismatch (serde.ErrInvalidValue) where resolution fails.
func resolve(r, w *schema.Type, v any, path string) (any, error) {
	if w.Kind == schema.Union {
		if v == nil {
			if hasNull(r) {
				return nil, nil
			}
			return nil, mismatch(path, "writer value is null, reader type %s is not nullable", describe(r))
		}
		m, ok := v.(map[string]any)
		if !ok || len(m) != 1 {
			return nil, mismatch(path, "decoded union is %T", v)
		}
		for k, x := range m {
			for _, b := range w.Branches {
				if b.BranchName() == k {
					return resolve(r, b, x, path)
				}
			}
			return nil, mismatch(path, "decoded union branch %q is not in the writer schema", k)
		}
	}
	if r.Kind == schema.Union {
		for _, b := range r.Branches {
			if len(schema.CanRead(b, w)) > 0 {
				continue
			}
			if b.Kind == schema.Null {
				return nil, nil
			}
			x, err := resolve(b, w, v, path)
			if err != nil {
				return nil, err
			}
			return map[string]any{b.BranchName(): x}, nil
		}
		return nil, mismatch(path, "no branch of the reader union reads writer type %s", describe(w))
	}
	switch r.Kind {
	case schema.Long:
		if x, ok := v.(int32); ok && w.Kind == schema.Int && w.Logical == "" {
			return int64(x), nil
		}
	case schema.Float:
		switch x := v.(type) {
		case int32:
			return float32(x), nil
		case int64:
			return float32(x), nil
		}
	case schema.Double:
		switch x := v.(type) {
		case int32:
			return float64(x), nil
		case int64:
			return float64(x), nil
		case float32:
			return float64(x), nil
		}
	case schema.String:
		if x, ok := v.([]byte); ok {
			return string(x), nil
		}
	case schema.Bytes:
		if x, ok := v.(string); ok {
			return []byte(x), nil
		}
	case schema.Enum:
		s, ok := v.(string)
		if !ok {
			break
		}
		for _, sym := range r.Symbols {
			if sym == s {
				return s, nil
			}
		}
		if r.Default != "" {
			return r.Default, nil
		}
		return nil, mismatch(path, "writer symbol %q is not in reader enum %s, which has no default", s, r.FullName())
	case schema.Array:
		a, ok := v.([]any)
		if !ok || w.Kind != schema.Array {
			break
		}
		out := make([]any, len(a))
		for i, x := range a {
			n, err := resolve(r.Items, w.Items, x, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case schema.Map:
		m, ok := v.(map[string]any)
		if !ok || w.Kind != schema.Map {
			break
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			n, err := resolve(r.Values, w.Values, x, path+"["+k+"]")
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	case schema.Record:
		m, ok := v.(map[string]any)
		if !ok || w.Kind != schema.Record {
			break
		}
		out := make(map[string]any, len(r.Fields))
		for _, rf := range r.Fields {
			wf := w.Field(rf.Name)
			for _, a := range rf.Aliases {
				if wf == nil {
					wf = w.Field(a)
				}
			}
			if wf == nil {
				if !rf.HasDefault {
					return nil, mismatch(path, "reader field %s.%s is missing from the writer and has no default", r.FullName(), rf.Name)
				}
				d, err := defaultNative(rf.Type, rf.Default, path+"."+rf.Name)
				if err != nil {
					return nil, err
				}
				out[rf.Name] = d
				continue
			}
			n, err := resolve(rf.Type, wf.Type, m[wf.Name], path+"."+rf.Name)
			if err != nil {
				return nil, err
			}
			out[rf.Name] = n
		}
		return out, nil
	}
	if r.Kind == w.Kind {
		return v, nil
	}
	return nil, mismatch(path, "reader type %s cannot read writer type %s", describe(r), describe(w))
}

// defaultNative converts a field default (JSON, as the schema gives it) to native form. As
// the specification says, a union's default is of its first branch, and bytes and fixed
// defaults are strings whose code points are the byte values.
func defaultNative(t *schema.Type, d any, path string) (any, error) {
	bad := func() (any, error) {
		return nil, mismatch(path, "default %v does not fit %s", d, describe(t))
	}
	switch t.Kind {
	case schema.Null:
		return nil, nil
	case schema.Union:
		first := t.Branches[0]
		if first.Kind == schema.Null {
			return nil, nil
		}
		x, err := defaultNative(first, d, path)
		if err != nil {
			return nil, err
		}
		return map[string]any{first.BranchName(): x}, nil
	case schema.Boolean:
		if b, ok := d.(bool); ok {
			return b, nil
		}
	case schema.Int, schema.Long, schema.Float, schema.Double:
		f, ok := d.(float64)
		if !ok {
			return bad()
		}
		switch t.Kind {
		case schema.Int:
			return int32(f), nil
		case schema.Long:
			return int64(f), nil
		case schema.Float:
			return float32(f), nil
		}
		return f, nil
	case schema.String, schema.Enum:
		if s, ok := d.(string); ok {
			return s, nil
		}
	case schema.Bytes, schema.Fixed:
		s, ok := d.(string)
		if !ok {
			return bad()
		}
		b := make([]byte, 0, len(s))
		for _, r := range s {
			if r > 0xff {
				return bad()
			}
			b = append(b, byte(r))
		}
		if t.Logical == "decimal" {
			n := new(big.Int).SetBytes(b)
			if len(b) > 0 && b[0]&0x80 != 0 {
				n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
			}
			return new(big.Rat).SetFrac(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Scale)), nil)), nil
		}
		return b, nil
	case schema.Array:
		a, ok := d.([]any)
		if !ok {
			return bad()
		}
		out := make([]any, len(a))
		for i, x := range a {
			n, err := defaultNative(t.Items, x, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case schema.Map:
		m, ok := d.(map[string]any)
		if !ok {
			return bad()
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			n, err := defaultNative(t.Values, x, path+"["+k+"]")
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	case schema.Record:
		m, ok := d.(map[string]any)
		if !ok {
			return bad()
		}
		out := make(map[string]any, len(t.Fields))
		for _, f := range t.Fields {
			x, present := m[f.Name]
			if !present {
				if !f.HasDefault {
					return bad()
				}
				x = f.Default
			}
			n, err := defaultNative(f.Type, x, path+"."+f.Name)
			if err != nil {
				return nil, err
			}
			out[f.Name] = n
		}
		return out, nil
	}
	return bad()
}
