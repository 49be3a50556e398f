// Package pbschema compiles .proto schema text fetched from a schema registry into
// descriptors at run time (with github.com/bufbuild/protocompile) and maps between a
// message descriptor and its Confluent message-index path.
package pbschema

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// MainFile is the name the schema being compiled gets when it has none of its own; the
// registry stores schemas without a file name, and references are known by their import
// path.
const MainFile = "schema.proto"

// Compile compiles text, whose imports are found in deps (import path -> .proto text) or
// among protoc's standard imports (google/protobuf/*.proto), and returns its descriptor.
// The error names the line and column of the first problem.
func Compile(ctx context.Context, text string, deps map[string]string) (protoreflect.FileDescriptor, error) {
	name := MainFile
	for deps[name] != "" {
		name = "_" + name
	}
	files := map[string]string{name: text}
	for k, v := range deps {
		files[k] = v
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			Accessor: func(path string) (io.ReadCloser, error) {
				if src, ok := files[path]; ok {
					return io.NopCloser(strings.NewReader(src)), nil
				}
				return nil, fmt.Errorf("import %q: not a reference of the schema nor a standard import", path)
			},
		}),
		MaxParallelism: 1,
		Reporter:       reporter.NewReporter(nil, nil),
	}
	out, err := c.Compile(ctx, name)
	if err != nil {
		return nil, err
	}
	if len(out) != 1 {
		return nil, errors.New("compiler returned no file")
	}
	return out[0], nil
}

// Indexes returns the message-index path of md: its index among the top-level messages of
// its file, then its index among each enclosing message's nested messages, outermost first.
// Map-entry messages (the descriptors protoc synthesizes for map fields) are not counted:
// Confluent's Java serde counts the messages declared in the .proto text, where a map field
// declares none, and its JavaScript serde skips them too. So a message declared after a map
// field has a smaller index here than its descriptor index.
func Indexes(md protoreflect.MessageDescriptor) []int {
	var rev []int
	var d protoreflect.Descriptor = md
	for {
		m, ok := d.(protoreflect.MessageDescriptor)
		if !ok {
			break
		}
		rev = append(rev, declaredIndex(m))
		d = m.Parent()
	}
	out := make([]int, len(rev))
	for i, v := range rev {
		out[len(rev)-1-i] = v
	}
	return out
}

// siblings returns the messages declared beside m (in its file or enclosing message).
func siblings(m protoreflect.MessageDescriptor) protoreflect.MessageDescriptors {
	if p, ok := m.Parent().(protoreflect.MessageDescriptor); ok {
		return p.Messages()
	}
	return m.ParentFile().Messages()
}

// declaredIndex is m's index among its siblings that are not map entries.
func declaredIndex(m protoreflect.MessageDescriptor) int {
	sib := siblings(m)
	n := 0
	for i := range m.Index() {
		if !sib.Get(i).IsMapEntry() {
			n++
		}
	}
	return n
}

// declared returns msgs without map entries.
func declared(msgs protoreflect.MessageDescriptors) []protoreflect.MessageDescriptor {
	out := make([]protoreflect.MessageDescriptor, 0, msgs.Len())
	for i := range msgs.Len() {
		if m := msgs.Get(i); !m.IsMapEntry() {
			out = append(out, m)
		}
	}
	return out
}

// ByIndexes returns the message of fd at the message-index path idx (map entries not
// counted, as in Indexes). It returns an error naming the index that is out of range.
func ByIndexes(fd protoreflect.FileDescriptor, idx []int) (protoreflect.MessageDescriptor, error) {
	if len(idx) == 0 {
		return nil, errors.New("empty message-index path")
	}
	msgs := declared(fd.Messages())
	var md protoreflect.MessageDescriptor
	for depth, i := range idx {
		if i < 0 || i >= len(msgs) {
			where := "the schema has"
			if md != nil {
				where = "message " + string(md.FullName()) + " has"
			}
			return nil, fmt.Errorf("message index %d (depth %d of %v) out of range: %s %d message(s)", i, depth, idx, where, len(msgs))
		}
		md = msgs[i]
		msgs = declared(md.Messages())
	}
	return md, nil
}

// FindMessage returns the message of fd (top-level or nested) with the given full name, or
// nil.
func FindMessage(fd protoreflect.FileDescriptor, name protoreflect.FullName) protoreflect.MessageDescriptor {
	return find(fd.Messages(), name)
}

func find(msgs protoreflect.MessageDescriptors, name protoreflect.FullName) protoreflect.MessageDescriptor {
	for i := range msgs.Len() {
		m := msgs.Get(i)
		if m.FullName() == name {
			return m
		}
		if strings.HasPrefix(string(name), string(m.FullName())+".") {
			if f := find(m.Messages(), name); f != nil {
				return f
			}
		}
	}
	return nil
}
