package schema

import "fmt"

// CanRead checks Avro schema resolution: whether data written with writer can be read with
// reader (the rules of the Avro specification, "Schema Resolution", which the Java
// SchemaCompatibility class and Confluent's registry apply). It returns one message per
// incompatibility found, none when reader can read writer.
func CanRead(reader, writer *Type) []string {
	c := &checker{seen: map[[2]*Type]bool{}}
	c.check(reader, writer, "")
	return c.msgs
}

// checker walks reader and writer together. seen holds the (reader, writer) pairs being
// checked on the current path: meeting one again (a recursive type) assumes it readable,
// the usual co-inductive rule for recursive schemas.
type checker struct {
	seen map[[2]*Type]bool
	msgs []string
}

func (c *checker) fail(path, format string, args ...any) {
	if path == "" {
		path = "/"
	}
	c.msgs = append(c.msgs, path+": "+fmt.Sprintf(format, args...))
}

func promotable(reader, writer Kind) bool {
	if reader == writer {
		return true
	}
	switch writer {
	case Int:
		return reader == Long || reader == Float || reader == Double
	case Long:
		return reader == Float || reader == Double
	case Float:
		return reader == Double
	case String:
		return reader == Bytes
	case Bytes:
		return reader == String
	}
	return false
}

func nameMatches(reader, writer *Type) bool {
	if reader.FullName() == writer.FullName() || reader.Name == writer.Name {
		return true
	}
	for _, a := range reader.Aliases {
		if a == writer.FullName() {
			return true
		}
	}
	return false
}

// readable reports, without recording messages, whether reader can read writer.
func (c *checker) readable(reader, writer *Type) bool {
	sub := &checker{seen: c.seen}
	sub.check(reader, writer, "")
	return len(sub.msgs) == 0
}

func (c *checker) check(reader, writer *Type, path string) {
	key := [2]*Type{reader, writer}
	if c.seen[key] {
		return
	}
	c.seen[key] = true
	defer delete(c.seen, key)
	if writer.Kind == Union {
		for i, b := range writer.Branches {
			c.check(reader, b, fmt.Sprintf("%s/%d", path, i))
		}
		return
	}
	if reader.Kind == Union {
		for _, b := range reader.Branches {
			if c.readable(b, writer) {
				return
			}
		}
		c.fail(path, "reader union lacks writer type %s", writer.BranchName())
		return
	}
	if !promotable(reader.Kind, writer.Kind) {
		c.fail(path, "reader type %s cannot read writer type %s", reader.Kind, writer.Kind)
		return
	}
	switch reader.Kind {
	case Record:
		if !nameMatches(reader, writer) {
			c.fail(path, "record name %s does not match writer's %s", reader.FullName(), writer.FullName())
			return
		}
		for _, rf := range reader.Fields {
			wf := writer.Field(rf.Name)
			for _, a := range rf.Aliases {
				if wf == nil {
					wf = writer.Field(a)
				}
			}
			if wf == nil {
				if !rf.HasDefault {
					c.fail(path+"/fields/"+rf.Name, "reader field %s has no default and is missing from the writer", rf.Name)
				}
				continue
			}
			c.check(rf.Type, wf.Type, path+"/fields/"+rf.Name)
		}
	case Enum:
		if !nameMatches(reader, writer) {
			c.fail(path, "enum name %s does not match writer's %s", reader.FullName(), writer.FullName())
			return
		}
		if reader.Default != "" {
			return
		}
		have := map[string]bool{}
		for _, s := range reader.Symbols {
			have[s] = true
		}
		for _, s := range writer.Symbols {
			if !have[s] {
				c.fail(path+"/symbols", "reader enum %s lacks writer symbol %s", reader.FullName(), s)
			}
		}
	case Fixed:
		if !nameMatches(reader, writer) {
			c.fail(path, "fixed name %s does not match writer's %s", reader.FullName(), writer.FullName())
		} else if reader.Size != writer.Size {
			c.fail(path+"/size", "fixed %s has size %d, writer's has %d", reader.FullName(), reader.Size, writer.Size)
		}
	case Array:
		c.check(reader.Items, writer.Items, path+"/items")
	case Map:
		c.check(reader.Values, writer.Values, path+"/values")
	}
}

// Compatibility levels of a registry subject (Confluent: BACKWARD is the default).
const (
	CompatNone               = "NONE"
	CompatBackward           = "BACKWARD"
	CompatBackwardTransitive = "BACKWARD_TRANSITIVE"
	CompatForward            = "FORWARD"
	CompatForwardTransitive  = "FORWARD_TRANSITIVE"
	CompatFull               = "FULL"
	CompatFullTransitive     = "FULL_TRANSITIVE"
)

// ValidLevel reports whether level is one of the compatibility levels.
func ValidLevel(level string) bool {
	switch level {
	case CompatNone, CompatBackward, CompatBackwardTransitive, CompatForward, CompatForwardTransitive,
		CompatFull, CompatFullTransitive:
		return true
	}
	return false
}

// Compatible checks candidate against the existing versions of a subject (oldest first) under
// the given level and returns the incompatibilities found; none means compatible.
func Compatible(level string, candidate *Type, existing []*Type) []string {
	if len(existing) == 0 || level == CompatNone {
		return nil
	}
	against := existing[len(existing)-1:]
	switch level {
	case CompatBackwardTransitive, CompatForwardTransitive, CompatFullTransitive:
		against = existing
	}
	var msgs []string
	for _, old := range against {
		switch level {
		case CompatBackward, CompatBackwardTransitive:
			msgs = append(msgs, CanRead(candidate, old)...)
		case CompatForward, CompatForwardTransitive:
			msgs = append(msgs, CanRead(old, candidate)...)
		case CompatFull, CompatFullTransitive:
			msgs = append(msgs, CanRead(candidate, old)...)
			msgs = append(msgs, CanRead(old, candidate)...)
		}
	}
	return msgs
}
