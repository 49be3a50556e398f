package pbschema

import (
	"cmp"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// AppendMarshal appends the binary encoding of m to buf in the order protobuf-java writes
// (and Confluent's Java and JavaScript serializers with it): fields, extensions included,
// in field-number order, oneof members among them by number; repeated scalars packed when
// the field is packed; map entries sorted by key (Java keeps insertion order, which Go maps
// do not have), each with its key and value; unknown fields last. The protobuf Go module's
// own marshaling writes oneof members after the other fields (for generated messages
// under Deterministic, and for dynamicpb messages), which decodes the same but is not
// Java's bytes; hence this walk over the message.
func AppendMarshal(buf []byte, m protoreflect.Message) ([]byte, error) {
	if err := proto.CheckInitialized(m.Interface()); err != nil {
		return nil, err
	}
	return appendMessage(buf, m), nil
}

type setField struct {
	fd protoreflect.FieldDescriptor
	v  protoreflect.Value
}

func appendMessage(buf []byte, m protoreflect.Message) []byte {
	var fields []setField
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		fields = append(fields, setField{fd, v})
		return true
	})
	slices.SortFunc(fields, func(a, b setField) int { return cmp.Compare(a.fd.Number(), b.fd.Number()) })
	for _, f := range fields {
		buf = appendField(buf, f.fd, f.v)
	}
	return append(buf, m.GetUnknown()...)
}

func appendField(buf []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) []byte {
	num := fd.Number()
	switch {
	case fd.IsMap():
		mp := v.Map()
		keys := make([]protoreflect.MapKey, 0, mp.Len())
		mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
			keys = append(keys, k)
			return true
		})
		slices.SortFunc(keys, compareKeys)
		kd, vd := fd.MapKey(), fd.MapValue()
		for _, k := range keys {
			entry := appendSingular(nil, kd, k.Value())
			entry = appendSingular(entry, vd, mp.Get(k))
			buf = protowire.AppendTag(buf, num, protowire.BytesType)
			buf = protowire.AppendBytes(buf, entry)
		}
		return buf
	case fd.IsList():
		l := v.List()
		if fd.IsPacked() && l.Len() > 0 {
			var packed []byte
			for i := range l.Len() {
				packed = appendValue(packed, fd, l.Get(i))
			}
			buf = protowire.AppendTag(buf, num, protowire.BytesType)
			return protowire.AppendBytes(buf, packed)
		}
		for i := range l.Len() {
			buf = appendSingular(buf, fd, l.Get(i))
		}
		return buf
	}
	return appendSingular(buf, fd, v)
}

func compareKeys(a, b protoreflect.MapKey) int {
	switch x := a.Interface().(type) {
	case bool:
		y := b.Bool()
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case int32, int64:
		return cmp.Compare(a.Int(), b.Int())
	case uint32, uint64:
		return cmp.Compare(a.Uint(), b.Uint())
	}
	return cmp.Compare(a.String(), b.String())
}

// appendSingular appends one tagged value of fd.
func appendSingular(buf []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) []byte {
	num := fd.Number()
	switch fd.Kind() {
	case protoreflect.GroupKind:
		buf = protowire.AppendTag(buf, num, protowire.StartGroupType)
		buf = appendMessage(buf, v.Message())
		return protowire.AppendTag(buf, num, protowire.EndGroupType)
	case protoreflect.MessageKind:
		buf = protowire.AppendTag(buf, num, protowire.BytesType)
		return protowire.AppendBytes(buf, appendMessage(nil, v.Message()))
	case protoreflect.StringKind, protoreflect.BytesKind:
		buf = protowire.AppendTag(buf, num, protowire.BytesType)
	case protoreflect.FloatKind, protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
		buf = protowire.AppendTag(buf, num, protowire.Fixed32Type)
	case protoreflect.DoubleKind, protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		buf = protowire.AppendTag(buf, num, protowire.Fixed64Type)
	default:
		buf = protowire.AppendTag(buf, num, protowire.VarintType)
	}
	return appendValue(buf, fd, v)
}

// appendValue appends the untagged encoding of a scalar value of fd.
func appendValue(buf []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) []byte {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protowire.AppendVarint(buf, protowire.EncodeBool(v.Bool()))
	case protoreflect.EnumKind:
		return protowire.AppendVarint(buf, uint64(v.Enum()))
	case protoreflect.Int32Kind, protoreflect.Int64Kind:
		return protowire.AppendVarint(buf, uint64(v.Int()))
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return protowire.AppendVarint(buf, protowire.EncodeZigZag(v.Int()))
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind:
		return protowire.AppendVarint(buf, v.Uint())
	case protoreflect.Fixed32Kind:
		return protowire.AppendFixed32(buf, uint32(v.Uint()))
	case protoreflect.Sfixed32Kind:
		return protowire.AppendFixed32(buf, uint32(v.Int()))
	case protoreflect.Fixed64Kind:
		return protowire.AppendFixed64(buf, v.Uint())
	case protoreflect.Sfixed64Kind:
		return protowire.AppendFixed64(buf, uint64(v.Int()))
	case protoreflect.FloatKind:
		return protowire.AppendFixed32(buf, math.Float32bits(float32(v.Float())))
	case protoreflect.DoubleKind:
		return protowire.AppendFixed64(buf, math.Float64bits(v.Float()))
	case protoreflect.StringKind:
		return protowire.AppendString(buf, v.String())
	case protoreflect.BytesKind:
		return protowire.AppendBytes(buf, v.Bytes())
	}
	return buf
}
