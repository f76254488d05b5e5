package gateway

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// TestDescriptorImageUpToDate: the embedded image (make generate) says
// what the compiled-in contracts say, comments aside.
func TestDescriptorImageUpToDate(t *testing.T) {
	files, err := commentedFiles()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(fd.Path(), "chemmy/") {
			return true
		}
		n++
		compiled, err := protoregistry.GlobalFiles.FindFileByPath(fd.Path())
		if err != nil {
			return true // a file no public service uses is not linked in
		}
		a, b := protodesc.ToFileDescriptorProto(fd), protodesc.ToFileDescriptorProto(compiled)
		a.SourceCodeInfo, b.SourceCodeInfo = nil, nil
		if !proto.Equal(a, b) {
			t.Errorf("%s: the embedded image differs from the generated code: run make generate", fd.Path())
		}
		return true
	})
	if n == 0 {
		t.Error("no chemmy file in the image")
	}
}
