package avro

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/kstreams-go/kstreams/serde/avro/internal/schema"
)

var (
	timeType     = reflect.TypeFor[time.Time]()
	durationType = reflect.TypeFor[time.Duration]()
	ratType      = reflect.TypeFor[big.Rat]()
	ratPtrType   = reflect.TypeFor[*big.Rat]()
)

func mismatch(path string, format string, args ...any) error {
	if path == "" {
		path = "."
	}
	return fmt.Errorf("%w: at %s: %s", errMismatch, path, fmt.Sprintf(format, args...))
}

// fieldMap maps avro field names of a struct type to field indexes.
var fieldMaps sync.Map // reflect.Type -> map[string][]int

func structFields(t reflect.Type) map[string][]int {
	if m, ok := fieldMaps.Load(t); ok {
		return m.(map[string][]int)
	}
	m := map[string][]int{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("avro"); ok {
			tag, _, _ = strings.Cut(tag, ",")
			if tag == "-" {
				continue
			}
			if tag != "" {
				name = tag
			}
		}
		m[name] = f.Index
	}
	fieldMaps.Store(t, m)
	return m
}

// lookupField finds the struct field for an avro field name: the tag or exact Go name first,
// then a case-insensitive match of the Go name.
func lookupField(v reflect.Value, name string) (reflect.Value, bool) {
	m := structFields(v.Type())
	if idx, ok := m[name]; ok {
		return v.FieldByIndex(idx), true
	}
	for n, idx := range m {
		if strings.EqualFold(n, name) {
			return v.FieldByIndex(idx), true
		}
	}
	return reflect.Value{}, false
}

func isNull(v reflect.Value) bool {
	if !v.IsValid() {
		return true
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
		return v.IsNil()
	}
	return false
}

func hasNull(t *schema.Type) bool {
	if t.Kind == schema.Null {
		return true
	}
	if t.Kind == schema.Union {
		for _, b := range t.Branches {
			if b.Kind == schema.Null {
				return true
			}
		}
	}
	return false
}

// toNative converts a Go value to the form goavro encodes for schema t.
func toNative(t *schema.Type, v reflect.Value, path string) (any, error) {
	for v.IsValid() && v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if isNull(v) {
		if hasNull(t) {
			return nil, nil
		}
		// A nil slice or map is an empty array, bytes or map where the schema has no null.
		if v.IsValid() && v.Kind() == reflect.Slice && t.Kind == schema.Array {
			return []any{}, nil
		}
		if v.IsValid() && v.Kind() == reflect.Slice && t.Kind == schema.Bytes && t.Logical == "" {
			return []byte{}, nil
		}
		if v.IsValid() && v.Kind() == reflect.Map && t.Kind == schema.Map {
			return map[string]any{}, nil
		}
		return nil, mismatch(path, "null for non-nullable avro type %s", t.Kind)
	}
	if t.Kind == schema.Union {
		// goavro's own union form passes through.
		if m, ok := v.Interface().(map[string]any); ok && len(m) == 1 {
			for k := range m {
				for _, b := range t.Branches {
					if b.BranchName() == k {
						return m, nil
					}
				}
			}
		}
		var errs []string
		for _, b := range t.Branches {
			if b.Kind == schema.Null {
				continue
			}
			n, err := toNative(b, v, path)
			if err == nil {
				return map[string]any{b.BranchName(): n}, nil
			}
			errs = append(errs, err.Error())
		}
		return nil, mismatch(path, "%s fits no branch of the union: %s", v.Type(), strings.Join(errs, "; "))
	}
	if v.Kind() == reflect.Pointer && v.Type() != ratPtrType {
		return toNative(t, v.Elem(), path)
	}
	vt := v.Type()
	switch t.Kind {
	case schema.Null:
		return nil, mismatch(path, "%s for avro null", vt)
	case schema.Boolean:
		if v.Kind() == reflect.Bool {
			return v.Bool(), nil
		}
	case schema.Int, schema.Long:
		return integer(t, v, path)
	case schema.Float, schema.Double:
		var f float64
		switch {
		case v.CanFloat():
			f = v.Float()
		case v.CanInt():
			f = float64(v.Int())
		case v.CanUint():
			f = float64(v.Uint())
		default:
			return nil, mismatch(path, "%s for avro %s", vt, t.Kind)
		}
		if t.Kind == schema.Float {
			return float32(f), nil
		}
		return f, nil
	case schema.String:
		if v.Kind() == reflect.String {
			return v.String(), nil
		}
		if t.Logical == "uuid" && v.Kind() == reflect.Array && v.Len() == 16 && vt.Elem().Kind() == reflect.Uint8 {
			b := make([]byte, 16)
			reflect.Copy(reflect.ValueOf(b), v)
			h := hex.EncodeToString(b)
			return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], nil
		}
	case schema.Bytes, schema.Fixed:
		if t.Logical == "decimal" {
			switch {
			case vt == ratPtrType:
				return v.Interface(), nil
			case vt == ratType:
				r := v.Interface().(big.Rat)
				return &r, nil
			}
			return nil, mismatch(path, "%s for avro decimal (want *big.Rat)", vt)
		}
		var b []byte
		switch {
		case v.Kind() == reflect.Slice && vt.Elem().Kind() == reflect.Uint8:
			b = v.Bytes()
		case v.Kind() == reflect.Array && vt.Elem().Kind() == reflect.Uint8:
			b = make([]byte, v.Len())
			reflect.Copy(reflect.ValueOf(b), v)
		case v.Kind() == reflect.String && t.Kind == schema.Bytes:
			b = []byte(v.String())
		default:
			return nil, mismatch(path, "%s for avro %s", vt, t.Kind)
		}
		if t.Kind == schema.Fixed && len(b) != t.Size {
			return nil, mismatch(path, "%d bytes for avro fixed %s of size %d", len(b), t.FullName(), t.Size)
		}
		return b, nil
	case schema.Enum:
		if v.Kind() == reflect.String {
			s := v.String()
			for _, sym := range t.Symbols {
				if sym == s {
					return s, nil
				}
			}
			return nil, mismatch(path, "%q is not a symbol of avro enum %s", s, t.FullName())
		}
	case schema.Array:
		if v.Kind() == reflect.Slice || v.Kind() == reflect.Array {
			out := make([]any, v.Len())
			for i := range out {
				n, err := toNative(t.Items, v.Index(i), fmt.Sprintf("%s[%d]", path, i))
				if err != nil {
					return nil, err
				}
				out[i] = n
			}
			return out, nil
		}
	case schema.Map:
		if v.Kind() == reflect.Map && vt.Key().Kind() == reflect.String {
			out := make(map[string]any, v.Len())
			it := v.MapRange()
			for it.Next() {
				k := it.Key().String()
				n, err := toNative(t.Values, it.Value(), path+"["+k+"]")
				if err != nil {
					return nil, err
				}
				out[k] = n
			}
			return out, nil
		}
	case schema.Record:
		out := make(map[string]any, len(t.Fields))
		switch v.Kind() {
		case reflect.Struct:
			for _, f := range t.Fields {
				fv, ok := lookupField(v, f.Name)
				if !ok {
					if f.HasDefault {
						continue // goavro writes the default
					}
					return nil, mismatch(path, "%s has no field for avro field %s.%s (and it has no default)", vt, t.FullName(), f.Name)
				}
				n, err := toNative(f.Type, fv, path+"."+f.Name)
				if err != nil {
					return nil, err
				}
				out[f.Name] = n
			}
			return out, nil
		case reflect.Map:
			if vt.Key().Kind() != reflect.String {
				break
			}
			for _, f := range t.Fields {
				fv := v.MapIndex(reflect.ValueOf(f.Name).Convert(vt.Key()))
				if !fv.IsValid() {
					if f.HasDefault {
						continue
					}
					if hasNull(f.Type) {
						out[f.Name] = nil
						continue
					}
					return nil, mismatch(path, "map has no key for avro field %s.%s", t.FullName(), f.Name)
				}
				n, err := toNative(f.Type, fv, path+"."+f.Name)
				if err != nil {
					return nil, err
				}
				out[f.Name] = n
			}
			return out, nil
		}
	}
	return nil, mismatch(path, "%s for avro %s", vt, describe(t))
}

func describe(t *schema.Type) string {
	s := t.Kind.String()
	if t.Named() {
		s += " " + t.FullName()
	}
	if t.Logical != "" {
		s += " (" + t.Logical + ")"
	}
	return s
}

// localWall returns the wall-clock time of tm read as if it were UTC (local-timestamp-*).
func localWall(tm time.Time) time.Time {
	return time.Date(tm.Year(), tm.Month(), tm.Day(), tm.Hour(), tm.Minute(), tm.Second(), tm.Nanosecond(), time.UTC)
}

func integer(t *schema.Type, v reflect.Value, path string) (any, error) {
	vt := v.Type()
	var n int64
	switch {
	case vt == timeType:
		tm := v.Interface().(time.Time)
		switch t.Logical {
		case "date":
			sec := tm.Unix()
			if tm.Location() != time.UTC {
				sec = localWall(tm).Unix()
			}
			days := sec / 86400
			if sec%86400 < 0 {
				days--
			}
			n = days
		case "timestamp-millis":
			n = tm.UnixMilli()
		case "timestamp-micros":
			n = tm.UnixMicro()
		case "local-timestamp-millis":
			n = localWall(tm).UnixMilli()
		case "local-timestamp-micros":
			n = localWall(tm).UnixMicro()
		default:
			return nil, mismatch(path, "time.Time for avro %s", describe(t))
		}
	case vt == durationType && (t.Logical == "time-millis" || t.Logical == "time-micros"):
		d := v.Interface().(time.Duration)
		if t.Logical == "time-millis" {
			n = d.Milliseconds()
		} else {
			n = d.Microseconds()
		}
	case v.CanInt():
		n = v.Int()
	case v.CanUint():
		u := v.Uint()
		if u > 1<<63-1 {
			return nil, mismatch(path, "%d overflows avro %s", u, t.Kind)
		}
		n = int64(u)
	default:
		return nil, mismatch(path, "%s for avro %s", vt, describe(t))
	}
	if t.Kind == schema.Int {
		if n < -1<<31 || n > 1<<31-1 {
			return nil, mismatch(path, "%d overflows avro int", n)
		}
		return int32(n), nil
	}
	return n, nil
}

// fromNative stores a goavro-decoded value of schema t into dst.
func fromNative(t *schema.Type, native any, dst reflect.Value, path string) error {
	if t.Kind == schema.Union {
		if native == nil {
			dst.SetZero()
			return nil
		}
		m, ok := native.(map[string]any)
		if !ok || len(m) != 1 {
			return mismatch(path, "decoded union is %T", native)
		}
		for k, val := range m {
			for _, b := range t.Branches {
				if b.BranchName() == k {
					return fromNative(b, val, dst, path)
				}
			}
			return mismatch(path, "decoded union branch %q is not in the schema", k)
		}
	}
	dt := dst.Type()
	if dst.Kind() == reflect.Interface {
		if native == nil {
			dst.SetZero()
			return nil
		}
		nv := reflect.ValueOf(native)
		if !nv.Type().AssignableTo(dt) {
			return mismatch(path, "decoded %T does not fit %s", native, dt)
		}
		dst.Set(nv)
		return nil
	}
	if native == nil {
		dst.SetZero()
		return nil
	}
	if dst.Kind() == reflect.Pointer && dt != ratPtrType {
		p := reflect.New(dt.Elem())
		if err := fromNative(t, native, p.Elem(), path); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	}
	fail := func() error { return mismatch(path, "cannot store avro %s (%T) in %s", describe(t), native, dt) }
	switch x := native.(type) {
	case bool:
		if dst.Kind() != reflect.Bool {
			return fail()
		}
		dst.SetBool(x)
	case int32, int64:
		n := reflect.ValueOf(x).Int()
		switch {
		case dt == timeType && t.Logical == "date":
			dst.Set(reflect.ValueOf(time.Unix(n*86400, 0).UTC()))
		case dst.CanInt():
			if dst.OverflowInt(n) {
				return mismatch(path, "%d overflows %s", n, dt)
			}
			dst.SetInt(n)
		case dst.CanUint():
			if n < 0 || dst.OverflowUint(uint64(n)) {
				return mismatch(path, "%d overflows %s", n, dt)
			}
			dst.SetUint(uint64(n))
		case dst.CanFloat():
			dst.SetFloat(float64(n))
		case dt == timeType:
			switch t.Logical {
			case "timestamp-millis":
				dst.Set(reflect.ValueOf(time.UnixMilli(n).UTC()))
			case "timestamp-micros":
				dst.Set(reflect.ValueOf(time.UnixMicro(n).UTC()))
			case "local-timestamp-millis":
				dst.Set(reflect.ValueOf(time.UnixMilli(n).UTC()))
			case "local-timestamp-micros":
				dst.Set(reflect.ValueOf(time.UnixMicro(n).UTC()))
			default:
				return fail()
			}
		default:
			return fail()
		}
	case time.Time:
		switch {
		case dt == timeType:
			dst.Set(reflect.ValueOf(x))
		case dst.CanInt():
			var n int64
			switch t.Logical {
			case "date":
				n = x.Unix() / 86400
				if x.Unix()%86400 < 0 {
					n--
				}
			case "timestamp-micros":
				n = x.UnixMicro()
			default:
				n = x.UnixMilli()
			}
			if dst.OverflowInt(n) {
				return mismatch(path, "%d overflows %s", n, dt)
			}
			dst.SetInt(n)
		default:
			return fail()
		}
	case time.Duration:
		switch {
		case dt == durationType:
			dst.SetInt(int64(x))
		case dst.CanInt():
			if t.Logical == "time-micros" {
				dst.SetInt(x.Microseconds())
			} else {
				dst.SetInt(x.Milliseconds())
			}
		default:
			return fail()
		}
	case float32, float64:
		if !dst.CanFloat() {
			return fail()
		}
		dst.SetFloat(reflect.ValueOf(x).Float())
	case string:
		switch {
		case dst.Kind() == reflect.String:
			dst.SetString(x)
		case dst.Kind() == reflect.Array && dst.Len() == 16 && dt.Elem().Kind() == reflect.Uint8:
			b, err := hex.DecodeString(strings.ReplaceAll(x, "-", ""))
			if err != nil || len(b) != 16 {
				return mismatch(path, "%q is not a UUID", x)
			}
			reflect.Copy(dst, reflect.ValueOf(b))
		default:
			return fail()
		}
	case []byte:
		switch {
		case dst.Kind() == reflect.Slice && dt.Elem().Kind() == reflect.Uint8:
			dst.SetBytes(append([]byte(nil), x...))
		case dst.Kind() == reflect.Array && dt.Elem().Kind() == reflect.Uint8 && dst.Len() == len(x):
			reflect.Copy(dst, reflect.ValueOf(x))
		case dst.Kind() == reflect.String:
			dst.SetString(string(x))
		default:
			return fail()
		}
	case *big.Rat:
		switch dt {
		case ratPtrType:
			dst.Set(reflect.ValueOf(x))
		case ratType:
			dst.Set(reflect.ValueOf(x).Elem())
		default:
			return fail()
		}
	case []any:
		if t.Kind != schema.Array {
			return fail()
		}
		switch dst.Kind() {
		case reflect.Slice:
			s := reflect.MakeSlice(dt, len(x), len(x))
			for i, e := range x {
				if err := fromNative(t.Items, e, s.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
			dst.Set(s)
		case reflect.Array:
			if dst.Len() != len(x) {
				return mismatch(path, "%d items for %s", len(x), dt)
			}
			for i, e := range x {
				if err := fromNative(t.Items, e, dst.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		default:
			return fail()
		}
	case map[string]any:
		switch {
		case t.Kind == schema.Map && dst.Kind() == reflect.Map && dt.Key().Kind() == reflect.String:
			m := reflect.MakeMapWithSize(dt, len(x))
			for k, e := range x {
				ev := reflect.New(dt.Elem()).Elem()
				if err := fromNative(t.Values, e, ev, path+"["+k+"]"); err != nil {
					return err
				}
				m.SetMapIndex(reflect.ValueOf(k).Convert(dt.Key()), ev)
			}
			dst.Set(m)
		case t.Kind == schema.Record && dst.Kind() == reflect.Struct:
			for _, f := range t.Fields {
				fv, ok := lookupField(dst, f.Name)
				if !ok {
					continue // a writer field the Go type does not have is skipped
				}
				if err := fromNative(f.Type, x[f.Name], fv, path+"."+f.Name); err != nil {
					return err
				}
			}
		case t.Kind == schema.Record && dst.Kind() == reflect.Map && dt.Key().Kind() == reflect.String:
			m := reflect.MakeMapWithSize(dt, len(x))
			for _, f := range t.Fields {
				ev := reflect.New(dt.Elem()).Elem()
				if err := fromNative(f.Type, x[f.Name], ev, path+"."+f.Name); err != nil {
					return err
				}
				m.SetMapIndex(reflect.ValueOf(f.Name).Convert(dt.Key()), ev)
			}
			dst.Set(m)
		default:
			return fail()
		}
	default:
		return fail()
	}
	return nil
}

// hasDecimal reports whether t contains a decimal logical type.
func hasDecimal(t *schema.Type, seen map[*schema.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	if (t.Kind == schema.Bytes || t.Kind == schema.Fixed) && t.Logical == "decimal" {
		return true
	}
	for _, f := range t.Fields {
		if hasDecimal(f.Type, seen) {
			return true
		}
	}
	for _, b := range t.Branches {
		if hasDecimal(b, seen) {
			return true
		}
	}
	return t.Items != nil && hasDecimal(t.Items, seen) || t.Values != nil && hasDecimal(t.Values, seen)
}

// stripDecimals removes "logicalType":"decimal" from a parsed schema JSON value, giving the
// schema the encoder compiles: decimals are written by encodeDecimals instead of goavro,
// whose fixed-decimal encoder does not pad zero to the fixed size and whose decimal encoder
// rounds values with more digits than the scale instead of refusing them.
func stripDecimals(v any) {
	switch x := v.(type) {
	case map[string]any:
		if x["logicalType"] == "decimal" && (x["type"] == "bytes" || x["type"] == "fixed") {
			delete(x, "logicalType")
		}
		for _, e := range x {
			stripDecimals(e)
		}
	case []any:
		for _, e := range x {
			stripDecimals(e)
		}
	}
}

// decimalBytes returns the big-endian two's-complement bytes of r's unscaled value at the
// type's scale (Java: BigDecimal.unscaledValue().toByteArray()), sign-extended to the size
// of a fixed. It refuses values with more decimals than the scale or more digits than the
// precision, as Java's Conversions.DecimalConversion does.
func decimalBytes(t *schema.Type, r *big.Rat, path string) ([]byte, error) {
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Scale)), nil)))
	if !scaled.IsInt() {
		return nil, mismatch(path, "decimal %s has more than %d decimals (the schema's scale)", r.RatString(), t.Scale)
	}
	n := scaled.Num()
	if t.Precision > 0 && len(new(big.Int).Abs(n).String()) > t.Precision && n.Sign() != 0 {
		return nil, mismatch(path, "decimal %s has more than %d digits (the schema's precision)", r.RatString(), t.Precision)
	}
	var b []byte
	if n.Sign() >= 0 {
		b = n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
	} else {
		k := new(big.Int).Neg(n)
		k.Sub(k, big.NewInt(1)) // -n-1 >= 0 has the magnitude bits of n
		size := k.BitLen()/8 + 1
		b = new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), uint(8*size)), n).Bytes()
		for len(b) < size {
			b = append([]byte{0xff}, b...)
		}
	}
	if t.Kind == schema.Fixed {
		if len(b) > t.Size {
			return nil, mismatch(path, "decimal %s needs %d bytes, fixed %s has %d", r.RatString(), len(b), t.FullName(), t.Size)
		}
		pad := byte(0)
		if n.Sign() < 0 {
			pad = 0xff
		}
		for len(b) < t.Size {
			b = append([]byte{pad}, b...)
		}
	}
	return b, nil
}

// encodeDecimals returns a copy of the native value v of schema t with decimals (*big.Rat)
// replaced by their bytes and "bytes.decimal" union keys renamed "bytes", for the encoder
// compiled from the stripDecimals schema. Values without decimals are shared, not copied.
func encodeDecimals(t *schema.Type, v any, path string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t.Kind {
	case schema.Union:
		m, ok := v.(map[string]any)
		if !ok || len(m) != 1 {
			return v, nil // goavro reports the error
		}
		for k, bv := range m {
			for _, b := range t.Branches {
				if b.BranchName() != k {
					continue
				}
				n, err := encodeDecimals(b, bv, path)
				if err != nil {
					return nil, err
				}
				if b.Kind == schema.Bytes {
					k = "bytes"
				}
				return map[string]any{k: n}, nil
			}
		}
	case schema.Bytes, schema.Fixed:
		if t.Logical != "decimal" {
			return v, nil
		}
		switch x := v.(type) {
		case *big.Rat:
			return decimalBytes(t, x, path)
		case big.Rat:
			return decimalBytes(t, &x, path)
		case []byte:
			return x, nil
		}
		return nil, mismatch(path, "%T for avro decimal (want *big.Rat)", v)
	case schema.Record:
		m, ok := v.(map[string]any)
		if !ok {
			return v, nil
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[k] = x
		}
		for _, f := range t.Fields {
			x, present := m[f.Name]
			if !present {
				continue
			}
			n, err := encodeDecimals(f.Type, x, path+"."+f.Name)
			if err != nil {
				return nil, err
			}
			out[f.Name] = n
		}
		return out, nil
	case schema.Array:
		a, ok := v.([]any)
		if !ok {
			return v, nil
		}
		out := make([]any, len(a))
		for i, x := range a {
			n, err := encodeDecimals(t.Items, x, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case schema.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return v, nil
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			n, err := encodeDecimals(t.Values, x, path+"["+k+"]")
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	}
	return v, nil
}
