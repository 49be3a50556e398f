// Package protoprint writes a protobuf file descriptor back as .proto source text, the form
// a schema registry stores for schemaType PROTOBUF. Compiling the text again (with its
// imports) yields the same descriptor, apart from source locations: the same messages,
// enums and services in the same order (message indexes depend on it), the same fields,
// numbers, labels, types, defaults, oneofs, reserved ranges and options. Type references are
// written fully qualified (".pkg.Msg"), so no scoping rule can resolve them elsewhere.
//
// Proto2 groups and editions files are not supported (Print returns an error).
package protoprint

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Print returns the .proto text of fd.
func Print(fd protoreflect.FileDescriptor) (string, error) {
	p := &printer{}
	switch fd.Syntax() {
	case protoreflect.Proto2:
		p.line(0, `syntax = "proto2";`)
	case protoreflect.Proto3:
		p.line(0, `syntax = "proto3";`)
	default:
		return "", fmt.Errorf("protoprint: %s: syntax %v is not supported", fd.Path(), fd.Syntax())
	}
	p.proto3 = fd.Syntax() == protoreflect.Proto3
	if fd.Package() != "" {
		p.line(0, "package %s;", fd.Package())
	}
	imps := fd.Imports()
	for i := range imps.Len() {
		imp := imps.Get(i)
		switch {
		case imp.IsPublic:
			p.line(0, "import public %s;", strconv.Quote(imp.Path()))
		//lint:ignore SA1019 descriptors written before weak fields were removed still mark imports weak; printed as they are
		case imp.IsWeak:
			p.line(0, "import weak %s;", strconv.Quote(imp.Path()))
		default:
			p.line(0, "import %s;", strconv.Quote(imp.Path()))
		}
	}
	p.options(0, fd.Options())
	msgs := fd.Messages()
	for i := range msgs.Len() {
		p.message(0, msgs.Get(i))
	}
	enums := fd.Enums()
	for i := range enums.Len() {
		p.enum(0, enums.Get(i))
	}
	p.extensions(0, fd.Extensions())
	svcs := fd.Services()
	for i := range svcs.Len() {
		p.service(svcs.Get(i))
	}
	if p.err != nil {
		return "", p.err
	}
	return p.b.String(), nil
}

type printer struct {
	b      strings.Builder
	proto3 bool
	err    error
}

func (p *printer) line(indent int, format string, args ...any) {
	p.b.WriteString(strings.Repeat("  ", indent))
	fmt.Fprintf(&p.b, format, args...)
	p.b.WriteByte('\n')
}

// optionList returns the set options of opts as "name = value" items: regular fields by
// name, extensions (custom options) as "(full.name)".
func optionList(opts proto.Message) []string {
	if opts == nil {
		return nil
	}
	m := opts.ProtoReflect()
	if !m.IsValid() {
		return nil
	}
	type item struct {
		num  protoreflect.FieldNumber
		ext  bool
		text string
	}
	var items []item
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := string(fd.Name())
		if fd.IsExtension() {
			name = "(" + string(fd.FullName()) + ")"
		}
		if fd.IsList() {
			l := v.List()
			for i := range l.Len() {
				items = append(items, item{fd.Number(), fd.IsExtension(), name + " = " + value(fd, l.Get(i))})
			}
			return true
		}
		if fd.IsMap() {
			return true // no map-typed options exist in descriptor.proto
		}
		items = append(items, item{fd.Number(), fd.IsExtension(), name + " = " + value(fd, v)})
		return true
	})
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].ext != items[j].ext {
			return !items[i].ext
		}
		return items[i].num < items[j].num
	})
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.text
	}
	return out
}

func (p *printer) options(indent int, opts proto.Message) {
	for _, o := range optionList(opts) {
		p.line(indent, "option %s;", o)
	}
}

// value writes an option value in .proto syntax.
func value(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return strconv.Itoa(int(v.Enum()))
	case protoreflect.StringKind:
		return quoteBytes([]byte(v.String()))
	case protoreflect.BytesKind:
		return quoteBytes(v.Bytes())
	case protoreflect.MessageKind, protoreflect.GroupKind:
		b, _ := prototext.MarshalOptions{}.Marshal(v.Message().Interface())
		return "{ " + string(b) + " }"
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return floatText(v.Float())
	}
	return v.String()
}

func floatText(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// quoteBytes writes bytes as a .proto string literal with octal escapes for anything
// outside printable ASCII.
func quoteBytes(b []byte) string {
	var s strings.Builder
	s.WriteByte('"')
	for _, c := range b {
		switch {
		case c == '"' || c == '\\':
			s.WriteByte('\\')
			s.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			s.WriteByte(c)
		default:
			fmt.Fprintf(&s, "\\%03o", c)
		}
	}
	s.WriteByte('"')
	return s.String()
}

func typeName(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.MessageKind:
		return "." + string(fd.Message().FullName())
	case protoreflect.EnumKind:
		return "." + string(fd.Enum().FullName())
	case protoreflect.GroupKind:
		return "group"
	}
	return fd.Kind().String()
}

func (p *printer) message(indent int, md protoreflect.MessageDescriptor) {
	p.line(indent, "message %s {", md.Name())
	in := indent + 1
	p.options(in, md.Options())
	fields := md.Fields()
	done := map[protoreflect.OneofDescriptor]bool{}
	for i := range fields.Len() {
		fd := fields.Get(i)
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			if done[od] {
				continue
			}
			done[od] = true
			p.line(in, "oneof %s {", od.Name())
			p.options(in+1, od.Options())
			ofs := od.Fields()
			for j := range ofs.Len() {
				p.field(in+1, ofs.Get(j), true)
			}
			p.line(in, "}")
			continue
		}
		p.field(in, fd, false)
	}
	nested := md.Messages()
	for i := range nested.Len() {
		if nm := nested.Get(i); !nm.IsMapEntry() {
			p.message(in, nm)
		}
	}
	enums := md.Enums()
	for i := range enums.Len() {
		p.enum(in, enums.Get(i))
	}
	p.extensions(in, md.Extensions())
	ranges := md.ExtensionRanges()
	for i := range ranges.Len() {
		r := ranges.Get(i)
		opts := optionList(md.ExtensionRangeOptions(i))
		suffix := ""
		if len(opts) > 0 {
			suffix = " [" + strings.Join(opts, ", ") + "]"
		}
		p.line(in, "extensions %s%s;", rangeText(r[0], r[1]-1), suffix)
	}
	rr := md.ReservedRanges()
	for i := range rr.Len() {
		r := rr.Get(i)
		p.line(in, "reserved %s;", rangeText(r[0], r[1]-1))
	}
	rn := md.ReservedNames()
	for i := range rn.Len() {
		p.line(in, "reserved %s;", strconv.Quote(string(rn.Get(i))))
	}
	p.line(indent, "}")
}

func rangeText(lo, hi protoreflect.FieldNumber) string {
	switch {
	case lo == hi:
		return strconv.Itoa(int(lo))
	case hi == protowire.MaxValidNumber:
		return fmt.Sprintf("%d to max", lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

func (p *printer) field(indent int, fd protoreflect.FieldDescriptor, inOneof bool) {
	if fd.Kind() == protoreflect.GroupKind {
		if p.err == nil {
			p.err = fmt.Errorf("protoprint: field %s: proto2 groups are not supported", fd.FullName())
		}
		return
	}
	var decl string
	switch {
	case fd.IsMap():
		decl = fmt.Sprintf("map<%s, %s>", typeName(fd.MapKey()), typeName(fd.MapValue()))
	case fd.IsList():
		decl = "repeated " + typeName(fd)
	case inOneof:
		decl = typeName(fd)
	case fd.Cardinality() == protoreflect.Required:
		decl = "required " + typeName(fd)
	case !p.proto3:
		decl = "optional " + typeName(fd)
	case fd.HasOptionalKeyword():
		decl = "optional " + typeName(fd)
	default:
		decl = typeName(fd)
	}
	var opts []string
	if fd.HasDefault() {
		opts = append(opts, "default = "+defaultText(fd))
	}
	if !fd.IsExtension() && fd.HasJSONName() && fd.JSONName() != jsonCamel(string(fd.Name())) {
		opts = append(opts, "json_name = "+strconv.Quote(fd.JSONName()))
	}
	opts = append(opts, optionList(fd.Options())...)
	suffix := ""
	if len(opts) > 0 {
		suffix = " [" + strings.Join(opts, ", ") + "]"
	}
	p.line(indent, "%s %s = %d%s;", decl, fd.Name(), fd.Number(), suffix)
}

// jsonCamel is protoc's default json_name: underscores dropped, the next letter upper-cased.
func jsonCamel(name string) string {
	var b strings.Builder
	up := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' {
			up = true
			continue
		}
		if up && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		b.WriteByte(c)
	}
	return b.String()
}

func defaultText(fd protoreflect.FieldDescriptor) string {
	v := fd.Default()
	switch fd.Kind() {
	case protoreflect.EnumKind:
		return string(fd.DefaultEnumValue().Name())
	case protoreflect.StringKind:
		return quoteBytes([]byte(v.String()))
	case protoreflect.BytesKind:
		return quoteBytes(v.Bytes())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return floatText(v.Float())
	}
	return v.String()
}

func (p *printer) enum(indent int, ed protoreflect.EnumDescriptor) {
	p.line(indent, "enum %s {", ed.Name())
	p.options(indent+1, ed.Options())
	vals := ed.Values()
	for i := range vals.Len() {
		v := vals.Get(i)
		suffix := ""
		if opts := optionList(v.Options()); len(opts) > 0 {
			suffix = " [" + strings.Join(opts, ", ") + "]"
		}
		p.line(indent+1, "%s = %d%s;", v.Name(), v.Number(), suffix)
	}
	rr := ed.ReservedRanges()
	for i := range rr.Len() {
		r := rr.Get(i)
		switch {
		case r[0] == r[1]:
			p.line(indent+1, "reserved %d;", r[0])
		case r[1] == math.MaxInt32:
			p.line(indent+1, "reserved %d to max;", r[0])
		default:
			p.line(indent+1, "reserved %d to %d;", r[0], r[1])
		}
	}
	rn := ed.ReservedNames()
	for i := range rn.Len() {
		p.line(indent+1, "reserved %s;", strconv.Quote(string(rn.Get(i))))
	}
	p.line(indent, "}")
}

// extensions writes extension declarations grouped by extendee, in declaration order.
func (p *printer) extensions(indent int, exts protoreflect.ExtensionDescriptors) {
	for i := 0; i < exts.Len(); {
		ext := exts.Get(i)
		extendee := ext.ContainingMessage().FullName()
		p.line(indent, "extend .%s {", extendee)
		for ; i < exts.Len() && exts.Get(i).ContainingMessage().FullName() == extendee; i++ {
			p.field(indent+1, exts.Get(i), false)
		}
		p.line(indent, "}")
	}
}

func (p *printer) service(sd protoreflect.ServiceDescriptor) {
	p.line(0, "service %s {", sd.Name())
	p.options(1, sd.Options())
	methods := sd.Methods()
	for i := range methods.Len() {
		m := methods.Get(i)
		in, out := "."+string(m.Input().FullName()), "."+string(m.Output().FullName())
		if m.IsStreamingClient() {
			in = "stream " + in
		}
		if m.IsStreamingServer() {
			out = "stream " + out
		}
		opts := optionList(m.Options())
		if len(opts) == 0 {
			p.line(1, "rpc %s(%s) returns (%s);", m.Name(), in, out)
			continue
		}
		p.line(1, "rpc %s(%s) returns (%s) {", m.Name(), in, out)
		for _, o := range opts {
			p.line(2, "option %s;", o)
		}
		p.line(1, "}")
	}
	p.line(0, "}")
}
