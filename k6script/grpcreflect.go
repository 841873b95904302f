package k6script

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	refv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	refv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// grpcReflect asks the server for the descriptors of every service it
// lists, by server reflection: v1, or v1alpha when the server has no v1
// (as k6's client does). Each service's file and every file it depends on
// are fetched; one the server cannot give is left out, as k6 allows.
// The stream is ended by ctx's cancel when done, as k6's is, so it is one
// RPC in grpc_req_duration (tagged with the VU's tags).
func grpcReflect(ctx context.Context, conn *grpc.ClientConn) (*descriptorpb.FileDescriptorSet, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ask, end, err := reflectV1(ctx, conn)
	if err != nil {
		return nil, err
	}
	list, err := ask(&refv1.ServerReflectionRequest{MessageRequest: &refv1.ServerReflectionRequest_ListServices{}})
	if status.Code(err) == codes.Unimplemented {
		end()
		if ask, end, err = reflectV1alpha(ctx, conn); err != nil {
			return nil, err
		}
		list, err = ask(&refv1.ServerReflectionRequest{MessageRequest: &refv1.ServerReflectionRequest_ListServices{}})
	}
	defer func() {
		cancel()
		end()
	}()
	if err != nil {
		return nil, fmt.Errorf("can't list services: %w", err)
	}
	set := &descriptorpb.FileDescriptorSet{}
	have := map[string]bool{}
	add := func(r *refv1.ServerReflectionResponse) []string {
		var deps []string
		for _, b := range r.GetFileDescriptorResponse().GetFileDescriptorProto() {
			fd := &descriptorpb.FileDescriptorProto{}
			if proto.Unmarshal(b, fd) != nil || have[fd.GetName()] {
				continue // a file it cannot describe is left out, as a missing one is
			}
			have[fd.GetName()] = true
			set.File = append(set.File, fd)
			deps = append(deps, fd.GetDependency()...)
		}
		return deps
	}
	for _, svc := range list.GetListServicesResponse().GetService() {
		r, err := ask(&refv1.ServerReflectionRequest{MessageRequest: &refv1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: svc.GetName()}})
		if err != nil {
			return nil, fmt.Errorf("can't get method on service %q: %w", svc.GetName(), err)
		}
		if e := r.GetErrorResponse(); e != nil {
			return nil, fmt.Errorf("can't get method on service %q: %s", svc.GetName(), e.GetErrorMessage())
		}
		todo := add(r)
		for len(todo) > 0 {
			name := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			if have[name] {
				continue
			}
			r, err := ask(&refv1.ServerReflectionRequest{MessageRequest: &refv1.ServerReflectionRequest_FileByFilename{FileByFilename: name}})
			if err != nil {
				return nil, fmt.Errorf("can't get file %q: %w", name, err)
			}
			if r.GetErrorResponse() != nil {
				have[name] = true // the server lacks it: left unresolved
				continue
			}
			todo = append(todo, add(r)...)
		}
	}
	return set, nil
}

// reflectAsk sends one request on a reflection stream and reads its
// answer; reflectEnd waits for the stream's end after ctx's cancel, so
// its stats are in before connect returns.
type (
	reflectAsk func(*refv1.ServerReflectionRequest) (*refv1.ServerReflectionResponse, error)
	reflectEnd func()
)

func reflectV1(ctx context.Context, conn *grpc.ClientConn) (reflectAsk, reflectEnd, error) {
	st, err := refv1.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, nil, err
	}
	ask := func(req *refv1.ServerReflectionRequest) (*refv1.ServerReflectionResponse, error) {
		if err := st.Send(req); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		return st.Recv()
	}
	return ask, reflectEnded(ctx, st), nil
}

// reflectEnded reads the stream's end (its error is that end: nothing
// more to read), then waits for grpc-go's stats of it, which its own
// goroutine may still be handing over after a cancel.
func reflectEnded(ctx context.Context, st grpc.ClientStream) reflectEnd {
	return func() {
		_ = st.RecvMsg(new(refv1.ServerReflectionResponse))
		if c, _ := ctx.Value(grpcCallKey{}).(*grpcCall); c != nil && c.endedCh != nil {
			t := time.NewTimer(time.Second) // a lost stat must not hang connect
			defer t.Stop()
			select {
			case <-c.endedCh:
			case <-t.C:
			}
		}
	}
}

// reflectV1alpha speaks v1alpha through v1's types: the two protocols'
// messages are the same, field for field.
func reflectV1alpha(ctx context.Context, conn *grpc.ClientConn) (reflectAsk, reflectEnd, error) {
	st, err := refv1alpha.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		return nil, nil, err
	}
	ask := func(req *refv1.ServerReflectionRequest) (*refv1.ServerReflectionResponse, error) {
		b, err := proto.Marshal(req)
		if err != nil {
			return nil, err
		}
		alpha := &refv1alpha.ServerReflectionRequest{}
		if err := proto.Unmarshal(b, alpha); err != nil {
			return nil, err
		}
		if err := st.Send(alpha); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		r, err := st.Recv()
		if err != nil {
			return nil, err
		}
		if b, err = proto.Marshal(r); err != nil {
			return nil, err
		}
		out := &refv1.ServerReflectionResponse{}
		return out, proto.Unmarshal(b, out)
	}
	return ask, reflectEnded(ctx, st), nil
}
