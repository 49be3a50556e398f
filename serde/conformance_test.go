package serde_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/serde"
)

// vectorsPath is the committed Java-generated vector file (see
// conformance/java/.../serde/SerdeVectors.java for its format).
const vectorsPath = "../conformance/vectors/serde.jsonl"

// vector is one line of serde.jsonl.
type vector struct {
	ID              string          `json:"id"`
	Serde           string          `json:"serde"`
	WindowSize      string          `json:"window_size"`
	Topic           string          `json:"topic"`
	Kind            string          `json:"kind"`
	Hex             *string         `json:"hex"`
	Value           json.RawMessage `json:"value"`
	ReserializedHex *string         `json:"reserialized_hex"`
	Error           string          `json:"error"`
}

// elem describes one Go serde under test: the typed serde and the
// conversions between its values and the vector's JSON value forms.
type elem[T any] struct {
	s     serde.Serde[T]
	parse func(any) T // from the decoded JSON value (never nil)
	repr  func(T) any // to a JSON-comparable value
}

// codec is an elem made untyped, as the engine holds serdes.
type codec struct {
	s     serde.Serde[any]
	parse func(any) any
	repr  func(any) any
}

func untyped[T any](e elem[T]) codec {
	return codec{
		s:     serde.Untyped(e.s),
		parse: func(v any) any { return e.parse(v) },
		repr:  func(v any) any { return e.repr(v.(T)) },
	}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func parseInt(v any, bits int) int64 {
	n, err := strconv.ParseInt(v.(string), 10, bits)
	if err != nil {
		panic(err)
	}
	return n
}

func parseBits(v any, bits int) uint64 {
	n, err := strconv.ParseUint(v.(string), 16, bits)
	if err != nil {
		panic(err)
	}
	return n
}

var (
	eString = elem[string]{serde.String(), func(v any) string { return v.(string) }, func(s string) any { return s }}
	eLong   = elem[int64]{serde.Long(), func(v any) int64 { return parseInt(v, 64) },
		func(n int64) any { return strconv.FormatInt(n, 10) }}
	eInteger = elem[int32]{serde.Integer(), func(v any) int32 { return int32(parseInt(v, 32)) },
		func(n int32) any { return strconv.FormatInt(int64(n), 10) }}
	eShort = elem[int16]{serde.Short(), func(v any) int16 { return int16(parseInt(v, 16)) },
		func(n int16) any { return strconv.FormatInt(int64(n), 10) }}
	eDouble = elem[float64]{serde.Double(), func(v any) float64 { return math.Float64frombits(parseBits(v, 64)) },
		func(f float64) any { return fmt.Sprintf("%016x", math.Float64bits(f)) }}
	eFloat = elem[float32]{serde.Float(), func(v any) float32 { return math.Float32frombits(uint32(parseBits(v, 32))) },
		func(f float32) any { return fmt.Sprintf("%08x", math.Float32bits(f)) }}
	eBoolean   = elem[bool]{serde.Boolean(), func(v any) bool { return v.(bool) }, func(b bool) any { return b }}
	eByteArray = elem[[]byte]{serde.ByteArray(), func(v any) []byte { return mustHex(v.(string)) },
		func(b []byte) any {
			if b == nil {
				return nil
			}
			return hex.EncodeToString(b)
		}}
	eBytes = elem[[]byte]{serde.Bytes(), eByteArray.parse, eByteArray.repr}
	eUUID  = elem[[16]byte]{serde.UUID(), func(v any) [16]byte {
		u, err := serde.ParseUUID(v.(string))
		if err != nil {
			panic(err)
		}
		return u
	}, func(u [16]byte) any { return serde.FormatUUID(u) }}
	eVoid = elem[struct{}]{serde.Void(), func(any) struct{} { return struct{}{} }, func(struct{}) any { return nil }}
)

// listOf is List(Nullable(inner)): Java lists of value types may hold nulls.
func listOf[T any](e elem[T]) codec {
	return untyped(elem[[]*T]{
		s: serde.ListSerde(serde.Nullable(e.s)),
		parse: func(v any) []*T {
			out := []*T{}
			for _, x := range v.([]any) {
				if x == nil {
					out = append(out, nil)
					continue
				}
				t := e.parse(x)
				out = append(out, &t)
			}
			return out
		},
		repr: func(l []*T) any {
			out := []any{}
			for _, x := range l {
				if x == nil {
					out = append(out, nil)
				} else {
					out = append(out, e.repr(*x))
				}
			}
			return out
		},
	})
}

// listOfNillable is List(inner) for an inner type whose nil is null.
func listOfNillable[T any](e elem[T]) codec {
	return untyped(elem[[]T]{
		s: serde.ListSerde(e.s),
		parse: func(v any) []T {
			out := []T{}
			for _, x := range v.([]any) {
				var t T
				if x != nil {
					t = e.parse(x)
				}
				out = append(out, t)
			}
			return out
		},
		repr: func(l []T) any {
			out := []any{}
			for _, x := range l {
				out = append(out, e.repr(x))
			}
			return out
		},
	})
}

func windowedOf[K any](e elem[K], s serde.Serde[serde.Windowed[K]]) codec {
	return untyped(elem[serde.Windowed[K]]{
		s: s,
		parse: func(v any) serde.Windowed[K] {
			m := v.(map[string]any)
			return serde.Windowed[K]{Key: e.parse(m["key"]),
				Window: serde.Window{Start: parseInt(m["start"], 64), End: parseInt(m["end"], 64)}}
		},
		repr: func(w serde.Windowed[K]) any {
			return map[string]any{"key": e.repr(w.Key), "start": strconv.FormatInt(w.Window.Start, 10),
				"end": strconv.FormatInt(w.Window.End, 10)}
		},
	})
}

// codecFor maps a vector's serde name (and window size) to our serde.
func codecFor(t *testing.T, v vector) codec {
	t.Helper()
	simple := map[string]codec{
		"String": untyped(eString), "Long": untyped(eLong), "Integer": untyped(eInteger),
		"Short": untyped(eShort), "Double": untyped(eDouble), "Float": untyped(eFloat),
		"Boolean": untyped(eBoolean), "ByteArray": untyped(eByteArray), "Bytes": untyped(eBytes),
		"UUID": untyped(eUUID), "Void": untyped(eVoid),
	}
	if c, ok := simple[v.Serde]; ok {
		return c
	}
	outer, inner, ok := strings.Cut(strings.TrimSuffix(v.Serde, ">"), "<")
	if !ok {
		t.Fatalf("%s: unknown serde %q", v.ID, v.Serde)
	}
	switch outer {
	case "List":
		switch inner {
		case "String":
			return listOf(eString)
		case "Long":
			return listOf(eLong)
		case "Integer":
			return listOf(eInteger)
		case "Short":
			return listOf(eShort)
		case "Double":
			return listOf(eDouble)
		case "Float":
			return listOf(eFloat)
		case "Boolean":
			return listOf(eBoolean)
		case "UUID":
			return listOf(eUUID)
		case "ByteArray":
			return listOfNillable(eByteArray)
		case "Bytes":
			return listOfNillable(eBytes)
		}
	case "TimeWindowed":
		ms := parseInt(v.WindowSize, 64)
		size := time.Duration(ms) * time.Millisecond
		if ms == math.MaxInt64 {
			size = math.MaxInt64 // Java's Long.MAX_VALUE ms (see serde.TimeWindowed)
		}
		switch inner {
		case "String":
			return windowedOf(eString, serde.TimeWindowed(eString.s, size))
		case "Long":
			return windowedOf(eLong, serde.TimeWindowed(eLong.s, size))
		case "ByteArray":
			return windowedOf(eByteArray, serde.TimeWindowed(eByteArray.s, size))
		}
	case "SessionWindowed":
		switch inner {
		case "String":
			return windowedOf(eString, serde.SessionWindowed(eString.s))
		case "Long":
			return windowedOf(eLong, serde.SessionWindowed(eLong.s))
		case "Integer":
			return windowedOf(eInteger, serde.SessionWindowed(eInteger.s))
		}
	}
	t.Fatalf("%s: no Go serde for %q", v.ID, v.Serde)
	return codec{}
}

func readVectors(t *testing.T, path string) []vector {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open vectors: %v", err)
	}
	defer f.Close()
	var vs []vector
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var v vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		vs = append(vs, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

// hexOrNil formats bytes for comparison with a vector's hex (nil is "null").
func hexOrNil(b []byte) string {
	if b == nil {
		return "null"
	}
	return hex.EncodeToString(b)
}

func ptrHex(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}

func inputBytes(v vector) []byte {
	if v.Hex == nil {
		return nil
	}
	return mustHex(*v.Hex)
}

// jsonEqual compares a Go value's JSON form with the vector's raw value.
func jsonEqual(t *testing.T, got any, want json.RawMessage) (string, bool) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var w any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	wb, _ := json.Marshal(w)
	return string(g) + " want " + string(wb), bytes.Equal(g, wb)
}

// TestJavaVectors checks every Java-generated vector in both directions:
// our serializer writes Java's bytes, our deserializer reads Java's bytes
// to Java's value, and input Java rejects is rejected with an *Error that
// names serde, topic and length.
func TestJavaVectors(t *testing.T) {
	vs := readVectors(t, vectorsPath)
	if len(vs) < 200 {
		t.Fatalf("only %d vectors in %s", len(vs), vectorsPath)
	}
	counts := map[string]int{}
	for _, v := range vs {
		counts[v.Kind]++
		t.Run(v.ID, func(t *testing.T) {
			c := codecFor(t, v)
			in := inputBytes(v)
			switch v.Kind {
			case "roundtrip", "deserialize":
				var value any
				if string(v.Value) != "null" {
					var raw any
					if err := json.Unmarshal(v.Value, &raw); err != nil {
						t.Fatal(err)
					}
					value = c.parse(raw)
				}
				// Deserialize Java's bytes.
				got, err := c.s.Deserialize(v.Topic, serde.NewHeaders(), in)
				if err != nil {
					t.Fatalf("Deserialize(%s): %v", hexOrNil(in), err)
				}
				if got == nil {
					if string(v.Value) != "null" {
						t.Fatalf("Deserialize(%s) = nil, want %s", hexOrNil(in), v.Value)
					}
				} else if msg, ok := jsonEqual(t, c.repr(got), v.Value); !ok {
					t.Fatalf("Deserialize(%s) = %s", hexOrNil(in), msg)
				}
				// Serialize: the vector's value for a roundtrip, the decoded
				// value for a deserialize-only vector.
				wantHex := ptrHex(v.Hex)
				if v.Kind == "deserialize" {
					value, wantHex = got, ptrHex(v.ReserializedHex)
				}
				b, err := c.s.Serialize(v.Topic, serde.NewHeaders(), value)
				if err != nil {
					t.Fatalf("Serialize: %v", err)
				}
				if hexOrNil(b) != wantHex {
					t.Fatalf("Serialize = %s, want %s (Java)", hexOrNil(b), wantHex)
				}
			case "reject":
				got, err := c.s.Deserialize(v.Topic, serde.NewHeaders(), in)
				if err == nil {
					t.Fatalf("Deserialize(%s) = %#v, want an error like Java's %s", hexOrNil(in), got, v.Error)
				}
				var se *serde.Error
				if !errors.As(err, &se) {
					t.Fatalf("error %v (%T) is not a *serde.Error", err, err)
				}
				name := serde.Name(c.s)
				if se.Serde != name || se.Topic != v.Topic || se.Len != len(in) || se.Op != serde.OpDeserialize {
					t.Fatalf("error %+v: want serde %q topic %q len %d", se, name, v.Topic, len(in))
				}
				msg := err.Error()
				for _, want := range []string{name, strconv.Quote(v.Topic), fmt.Sprintf("%d bytes", len(in))} {
					if !strings.Contains(msg, want) {
						t.Fatalf("error %q does not mention %q", msg, want)
					}
				}
				// Input Java rejects is what a deserialization exception
				// handler may skip: every such error matches ErrCorrupt.
				if !errors.Is(err, serde.ErrCorrupt) {
					t.Fatalf("error %q does not match ErrCorrupt", msg)
				}
			default:
				t.Fatalf("unknown kind %q", v.Kind)
			}
		})
	}
	t.Logf("vectors: %v", counts)
}

// TestJavaVectorsUpToDate regenerates the vectors with the Java harness and
// diffs them against the committed file, so the two cannot drift. It needs
// the harness classpath in KSTREAMS_CONFORMANCE_CP (e.g.
// "$PWD/conformance/java/target/conformance.jar:$PWD/conformance/java/target/lib/*",
// after `mvn -B -q -f conformance/java/pom.xml package`).
func TestJavaVectorsUpToDate(t *testing.T) {
	cp := os.Getenv("KSTREAMS_CONFORMANCE_CP")
	if cp == "" {
		t.Skip("KSTREAMS_CONFORMANCE_CP is not set: not regenerating serde vectors from Java " +
			"(build with `mvn -B -q -f conformance/java/pom.xml package` and set it to " +
			"'conformance/java/target/conformance.jar:conformance/java/target/lib/*' with absolute paths)")
	}
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	out := filepath.Join(t.TempDir(), "serde.jsonl")
	cmd := exec.Command(java, "-cp", cp, "io.kstreams.conformance.serde.SerdeVectors", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("java SerdeVectors: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s is stale (regenerate it with SerdeVectors); first difference at line %d:\njava:      %s\ncommitted: %s",
				vectorsPath, i+1, g, w)
		}
	}
}
