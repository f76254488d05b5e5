package gateway

import (
	_ "embed"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// image is `buf build` of proto/ (make generate writes it): the contracts
// with their comments, which the generated Go code does not keep. Server
// reflection answers from it, so `grpcurl describe` shows each call's and
// each field's documentation.
//
//go:embed chemmy.binpb
var image []byte

// commentedFiles are the files of image.
func commentedFiles() (*protoregistry.Files, error) {
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(image, &set); err != nil {
		return nil, fmt.Errorf("gateway: descriptor image: %w", err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("gateway: descriptor image: %w", err)
	}
	return files, nil
}

// reflectionResolver answers from the commented files first, then from
// the compiled-in ones (health, reflection).
type reflectionResolver struct{ first, then *protoregistry.Files }

func (r reflectionResolver) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	if fd, err := r.first.FindFileByPath(path); err == nil {
		return fd, nil
	}
	return r.then.FindFileByPath(path)
}

func (r reflectionResolver) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	if d, err := r.first.FindDescriptorByName(name); err == nil {
		return d, nil
	}
	return r.then.FindDescriptorByName(name)
}
