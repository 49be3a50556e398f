// Package apisurface counts the identifiers the module exports from its public (non-internal)
// packages, so a test can keep the public API small.
package apisurface

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Count is the number of exported identifiers of one package directory.
type Count struct {
	Dir   string // slash-separated, relative to the module root
	Names []string
}

// Walk counts the exported identifiers of every public package under root: top-level funcs,
// types, vars and consts; methods of exported types; exported fields of exported struct types
// and methods of exported interface types. Test files, internal packages, testdata, main
// packages and generated files (a "Code generated ... DO NOT EDIT." line) are skipped.
func Walk(root string) ([]Count, error) {
	byDir := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			base := d.Name()
			if path != root && (base == "internal" || base == "testdata" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" || ast.IsGenerated(f) {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		byDir[rel] = append(byDir[rel], exported(f)...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []Count
	for dir, names := range byDir {
		sort.Strings(names)
		out = append(out, Count{Dir: dir, Names: names})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, nil
}

func exported(f *ast.File) []string {
	var names []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				if d.Name.IsExported() {
					names = append(names, d.Name.Name)
				}
				continue
			}
			recv := recvName(d.Recv.List[0].Type)
			if ast.IsExported(recv) && d.Name.IsExported() {
				names = append(names, recv+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					names = append(names, s.Name.Name)
					names = append(names, members(s.Name.Name, s.Type)...)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							names = append(names, n.Name)
						}
					}
				}
			}
		}
	}
	return names
}

func members(typ string, t ast.Expr) []string {
	var names []string
	switch x := t.(type) {
	case *ast.StructType:
		for _, fld := range x.Fields.List {
			for _, n := range fld.Names {
				if n.IsExported() {
					names = append(names, typ+"."+n.Name)
				}
			}
		}
	case *ast.InterfaceType:
		for _, m := range x.Methods.List {
			for _, n := range m.Names {
				if n.IsExported() {
					names = append(names, typ+"."+n.Name)
				}
			}
		}
	}
	return names
}

func recvName(t ast.Expr) string {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
