// Command gen writes the Go code of the test schemas (common.proto, shop.proto) as
// protoc-gen-go would, without protoc: the .proto files are compiled with protocompile and
// handed to protoc-gen-go's generator. Run it from the testpb directory:
//
//	go run ./gen
package main

import (
	"context"
	"log"
	"os"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/pluginpb"
)

func main() {
	files := []string{"common.proto", "shop.proto"}
	c := protocompile.Compiler{
		Resolver:       protocompile.WithStandardImports(&protocompile.SourceResolver{}),
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	compiled, err := c.Compile(context.Background(), files...)
	if err != nil {
		log.Fatal(err)
	}
	req := &pluginpb.CodeGeneratorRequest{FileToGenerate: files, Parameter: proto.String("paths=source_relative")}
	seen := map[string]bool{}
	for _, f := range compiled {
		imps := f.Imports()
		for i := range imps.Len() {
			if p := imps.Get(i).Path(); !seen[p] {
				seen[p] = true
				req.ProtoFile = append(req.ProtoFile, protodesc.ToFileDescriptorProto(imps.Get(i).FileDescriptor))
			}
		}
		if !seen[f.Path()] {
			seen[f.Path()] = true
			req.ProtoFile = append(req.ProtoFile, protodesc.ToFileDescriptorProto(f))
		}
	}
	plugin, err := protogen.Options{}.New(req)
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range plugin.Files {
		if f.Generate {
			internal_gengo.GenerateFile(plugin, f)
		}
	}
	resp := plugin.Response()
	if resp.Error != nil {
		log.Fatal(*resp.Error)
	}
	for _, f := range resp.File {
		if err := os.WriteFile(f.GetName(), []byte(f.GetContent()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
