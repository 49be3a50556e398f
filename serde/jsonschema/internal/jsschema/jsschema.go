// Package jsschema compiles JSON Schema documents fetched from a schema registry (with
// github.com/santhosh-tekuri/jsonschema/v6), validates instances, and flattens the
// validator's error tree into one entry per failing field, located by JSON pointer.
package jsschema

import (
	"bytes"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Base is the URL the root schema is compiled under when it has no $id; references with
// relative names resolve against it.
const Base = "mem://schema-registry/schema.json"

// Compiled is a compiled schema.
type Compiled struct {
	Schema *jsonschema.Schema
	Title  string // the root "title", "" when absent
}

// Compile compiles text with refs (reference name -> schema text). A reference is
// available under its name when the name is an absolute URL, and under the name resolved
// against Base (or the root's $id) otherwise. Schemas without "$schema" are read as draft 7,
// the draft Confluent's JSON Schema serde assumes. No schema is loaded from files or the
// network.
func Compile(text string, refs map[string]string) (*Compiled, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.UseLoader(noLoader{})
	root := Base
	var title string
	if obj, ok := doc.(map[string]any); ok {
		if id, ok := obj["$id"].(string); ok {
			if u, err := url.Parse(id); err == nil && u.IsAbs() {
				root = strings.TrimSuffix(id, "#")
			}
		}
		title, _ = obj["title"].(string)
	}
	if err := c.AddResource(root, doc); err != nil {
		return nil, err
	}
	added := map[string]bool{root: true}
	names := make([]string, 0, len(refs))
	for n := range refs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		rdoc, err := jsonschema.UnmarshalJSON(strings.NewReader(refs[name]))
		if err != nil {
			return nil, fmt.Errorf("reference %q is not JSON: %v", name, err)
		}
		for _, base := range []string{Base, root} {
			u, err := resolve(base, name)
			if err != nil || added[u] {
				continue
			}
			added[u] = true
			if err := c.AddResource(u, rdoc); err != nil {
				return nil, fmt.Errorf("reference %q: %v", name, err)
			}
		}
	}
	s, err := c.Compile(root)
	if err != nil {
		return nil, err
	}
	return &Compiled{Schema: s, Title: title}, nil
}

func resolve(base, ref string) (string, error) {
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	r, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	return b.ResolveReference(r).String(), nil
}

type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("schema %s is neither the schema nor one of its references", u)
}

// Instance decodes JSON text into the form the validator takes (numbers kept exact).
func Instance(data []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

// Failure is one failing field: Pointer is the JSON pointer of the instance location ("" is
// the whole document), Keyword the schema keyword that failed, Message the reason.
type Failure struct {
	Pointer string
	Keyword string
	Message string
}

var printer = message.NewPrinter(language.English)

// Failures flattens a validation error into its leaf failures, in the validator's order. A
// missing required property, or a property additionalProperties forbids, is reported at
// the property's own pointer. Errors other than *jsonschema.ValidationError give one
// failure at the root.
func Failures(err error) []Failure {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []Failure{{Message: err.Error()}}
	}
	var out []Failure
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		ptr := Pointer(e.InstanceLocation)
		kw := strings.Join(e.ErrorKind.KeywordPath(), "/")
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, p := range k.Missing {
				out = append(out, Failure{Pointer: ptr + "/" + escape(p), Keyword: kw, Message: "required property is missing"})
			}
			return
		case *kind.AdditionalProperties:
			for _, p := range k.Properties {
				out = append(out, Failure{Pointer: ptr + "/" + escape(p), Keyword: kw, Message: "additional property is not allowed"})
			}
			return
		}
		out = append(out, Failure{Pointer: ptr, Keyword: kw, Message: e.ErrorKind.LocalizedString(printer)})
	}
	walk(ve)
	return out
}

// Pointer is the JSON pointer (RFC 6901) of a location given as tokens.
func Pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escape(t))
	}
	return b.String()
}

func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}
