// Package schema is a small parsed model of an Avro schema, shared by the Avro serde (typed
// struct mapping, subject names), the registry double (compatibility checks) and the tests
// (canonical value form). Encoding and decoding stay with github.com/linkedin/goavro/v2.
package schema

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Kind is an Avro type.
type Kind int

// The Avro types.
const (
	Null Kind = iota
	Boolean
	Int
	Long
	Float
	Double
	Bytes
	String
	Record
	Enum
	Array
	Map
	Union
	Fixed
)

var kindNames = [...]string{"null", "boolean", "int", "long", "float", "double", "bytes", "string",
	"record", "enum", "array", "map", "union", "fixed"}

// String returns the Avro name of the kind ("record", "long", ...).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Type is one node of a parsed schema. Named types (record, enum, fixed) are shared: a
// reference by name points at the same *Type, so recursive schemas form cycles.
type Type struct {
	Kind      Kind
	Logical   string // logicalType, "" if none
	Precision int    // decimal
	Scale     int    // decimal
	Name      string // short name of a named type
	Namespace string
	Aliases   []string // full names
	Fields    []*Field // record
	Symbols   []string // enum
	Default   string   // enum default symbol, "" if none
	Size      int      // fixed
	Items     *Type    // array
	Values    *Type    // map
	Branches  []*Type  // union
}

// Field is a record field.
type Field struct {
	Name       string
	Aliases    []string
	Type       *Type
	HasDefault bool
	Default    any // JSON value of the default
}

// FullName returns namespace.name of a named type, or "" for other types.
func (t *Type) FullName() string {
	if t.Name == "" {
		return ""
	}
	if t.Namespace == "" {
		return t.Name
	}
	return t.Namespace + "." + t.Name
}

// Named reports whether t is a record, enum or fixed.
func (t *Type) Named() bool { return t.Kind == Record || t.Kind == Enum || t.Kind == Fixed }

// BranchName returns the key goavro uses for a union branch of this type: the full name for
// named types, "bytes.decimal" for a decimal on bytes, "<type>.<logical>" for the logical types
// goavro knows on primitives, else the primitive type name.
func (t *Type) BranchName() string {
	if t.Named() {
		return t.FullName()
	}
	switch t.Kind {
	case Array, Map, Union:
		return t.Kind.String()
	}
	switch t.Kind.String() + "." + t.Logical {
	case "long.timestamp-millis", "long.timestamp-micros", "int.time-millis", "long.time-micros", "int.date":
		return t.Kind.String() + "." + t.Logical
	case "bytes.decimal":
		return "bytes.decimal"
	}
	return t.Kind.String()
}

// Field returns the record field with the given name, or nil.
func (t *Type) Field(name string) *Field {
	for _, f := range t.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Parse parses an Avro schema given as JSON text.
func Parse(text string) (*Type, error) {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, fmt.Errorf("avro schema is not JSON: %w", err)
	}
	p := &parser{named: map[string]*Type{}}
	return p.parse(v, "")
}

type parser struct {
	named map[string]*Type
}

var primitives = map[string]Kind{"null": Null, "boolean": Boolean, "int": Int, "long": Long,
	"float": Float, "double": Double, "bytes": Bytes, "string": String}

func fullName(name, ns string) (string, string) {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[i+1:], name[:i]
	}
	return name, ns
}

func (p *parser) parse(v any, ns string) (*Type, error) {
	switch s := v.(type) {
	case string:
		if k, ok := primitives[s]; ok {
			return &Type{Kind: k}, nil
		}
		n, nsp := fullName(s, ns)
		full := n
		if nsp != "" {
			full = nsp + "." + n
		}
		if t, ok := p.named[full]; ok {
			return t, nil
		}
		if t, ok := p.named[s]; ok {
			return t, nil
		}
		return nil, fmt.Errorf("avro schema: unknown type name %q", s)
	case []any:
		t := &Type{Kind: Union}
		for _, b := range s {
			bt, err := p.parse(b, ns)
			if err != nil {
				return nil, err
			}
			if bt.Kind == Union {
				return nil, fmt.Errorf("avro schema: union directly inside a union")
			}
			t.Branches = append(t.Branches, bt)
		}
		seen := map[string]bool{}
		for _, b := range t.Branches {
			if seen[b.BranchName()] {
				return nil, fmt.Errorf("avro schema: union has two branches of type %s", b.BranchName())
			}
			seen[b.BranchName()] = true
		}
		return t, nil
	case map[string]any:
		return p.parseObject(s, ns)
	}
	return nil, fmt.Errorf("avro schema: unexpected JSON %T", v)
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func num(m map[string]any, k string) int {
	f, _ := m[k].(float64)
	return int(f)
}

func (p *parser) names(m map[string]any, ns string) []string {
	var out []string
	if a, ok := m["aliases"].([]any); ok {
		for _, x := range a {
			if s, ok := x.(string); ok {
				n, nsp := fullName(s, ns)
				if nsp != "" {
					n = nsp + "." + n
				}
				out = append(out, n)
			}
		}
	}
	return out
}

func (p *parser) parseObject(m map[string]any, ns string) (*Type, error) {
	typ, ok := m["type"]
	if !ok {
		return nil, fmt.Errorf("avro schema: object without \"type\"")
	}
	ts, isStr := typ.(string)
	if !isStr {
		// {"type": {...}} or {"type": [...]}: a wrapped schema
		return p.parse(typ, ns)
	}
	logical := str(m, "logicalType")
	switch ts {
	case "record", "error", "enum", "fixed":
		name := str(m, "name")
		if name == "" {
			return nil, fmt.Errorf("avro schema: %s without a name", ts)
		}
		if explicit := str(m, "namespace"); explicit != "" || m["namespace"] != nil {
			ns = explicit
		}
		n, nsp := fullName(name, ns)
		t := &Type{Name: n, Namespace: nsp, Logical: logical}
		t.Aliases = p.names(m, nsp)
		full := t.FullName()
		if _, dup := p.named[full]; dup {
			return nil, fmt.Errorf("avro schema: type %s defined twice", full)
		}
		p.named[full] = t
		switch ts {
		case "enum":
			t.Kind = Enum
			syms, _ := m["symbols"].([]any)
			for _, s := range syms {
				ss, _ := s.(string)
				t.Symbols = append(t.Symbols, ss)
			}
			t.Default = str(m, "default")
		case "fixed":
			t.Kind = Fixed
			t.Size = num(m, "size")
			t.Precision, t.Scale = num(m, "precision"), num(m, "scale")
		default:
			t.Kind = Record
			fields, _ := m["fields"].([]any)
			for _, fv := range fields {
				fm, ok := fv.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("avro schema: record %s has a field that is not an object", full)
				}
				ft, err := p.parse(fm["type"], nsp)
				if err != nil {
					return nil, fmt.Errorf("field %s.%s: %w", full, str(fm, "name"), err)
				}
				f := &Field{Name: str(fm, "name"), Type: ft}
				if a, ok := fm["aliases"].([]any); ok {
					for _, x := range a {
						if s, ok := x.(string); ok {
							f.Aliases = append(f.Aliases, s)
						}
					}
				}
				f.Default, f.HasDefault = fm["default"]
				t.Fields = append(t.Fields, f)
			}
		}
		return t, nil
	case "array":
		items, err := p.parse(m["items"], ns)
		if err != nil {
			return nil, err
		}
		return &Type{Kind: Array, Items: items, Logical: logical}, nil
	case "map":
		values, err := p.parse(m["values"], ns)
		if err != nil {
			return nil, err
		}
		return &Type{Kind: Map, Values: values, Logical: logical}, nil
	}
	if k, ok := primitives[ts]; ok {
		return &Type{Kind: k, Logical: logical, Precision: num(m, "precision"), Scale: num(m, "scale")}, nil
	}
	t, err := p.parse(ts, ns)
	if err != nil {
		return nil, err
	}
	return t, nil
}
