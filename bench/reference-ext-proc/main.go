// The reference ext_proc server the benchmark measures steadfast against (variant V9):
// as little as an ext_proc server can do with grpc-go and go-control-plane. It answers
// the request-headers message with one fixed answer — the policy token, when given, as
// dynamic metadata in the same shape `steadfast serve` sends (namespace "steadfast", key
// "policy", a string) — answers any other phase with "continue", and ends each stream
// with OK as soon as the request headers are answered, as steadfast does.
//
//	go build -o reference-ext-proc . && ./reference-ext-proc -address 127.0.0.1:0 [-policy-token T]
//
// It prints "listening on HOST:PORT" once it accepts connections and stops on SIGTERM.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
)

type server struct {
	extprocv3.UnimplementedExternalProcessorServer
	// The answer to request headers, built once: every stream gets the same one.
	headersAnswer *extprocv3.ProcessingResponse
}

func newServer(policyToken string) *server {
	answer := &extprocv3.ProcessingResponse{
		Response: &extprocv3.ProcessingResponse_RequestHeaders{
			RequestHeaders: &extprocv3.HeadersResponse{Response: &extprocv3.CommonResponse{}},
		},
	}
	if policyToken != "" {
		answer.DynamicMetadata = &structpb.Struct{Fields: map[string]*structpb.Value{
			"steadfast": structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
				"policy": structpb.NewStringValue(policyToken),
			}}),
		}}
	}
	return &server{headersAnswer: answer}
}

// continueAnswer is "carry on, change nothing" for a phase other than request headers.
func continueAnswer(req *extprocv3.ProcessingRequest) *extprocv3.ProcessingResponse {
	common := &extprocv3.CommonResponse{}
	switch req.Request.(type) {
	case *extprocv3.ProcessingRequest_ResponseHeaders:
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseHeaders{
			ResponseHeaders: &extprocv3.HeadersResponse{Response: common}}}
	case *extprocv3.ProcessingRequest_RequestBody:
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestBody{
			RequestBody: &extprocv3.BodyResponse{Response: common}}}
	case *extprocv3.ProcessingRequest_ResponseBody:
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseBody{
			ResponseBody: &extprocv3.BodyResponse{Response: common}}}
	case *extprocv3.ProcessingRequest_RequestTrailers:
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestTrailers{
			RequestTrailers: &extprocv3.TrailersResponse{}}}
	case *extprocv3.ProcessingRequest_ResponseTrailers:
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseTrailers{
			ResponseTrailers: &extprocv3.TrailersResponse{}}}
	}
	return nil
}

func (s *server) Process(stream extprocv3.ExternalProcessor_ProcessServer) error {
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if _, ok := req.Request.(*extprocv3.ProcessingRequest_RequestHeaders); ok {
			if err := stream.Send(s.headersAnswer); err != nil {
				return err
			}
			// Nothing more to say about this request: end the stream with OK.
			return nil
		}
		if answer := continueAnswer(req); answer != nil {
			if err := stream.Send(answer); err != nil {
				return err
			}
		}
	}
}

func main() {
	address := flag.String("address", "127.0.0.1:50051", "HOST:PORT to listen on (port 0: any free port)")
	policyToken := flag.String("policy-token", "", "answer every request with this policy token (empty: an empty answer)")
	flag.Parse()

	lis, err := net.Listen("tcp", *address)
	if err != nil {
		fmt.Fprintf(os.Stderr, "reference-ext-proc: cannot listen on %s: %v\n", *address, err)
		os.Exit(1)
	}
	// As steadfast's server allows: one stream per request, many at once on Envoy's connection.
	srv := grpc.NewServer(grpc.MaxConcurrentStreams(10000))
	extprocv3.RegisterExternalProcessorServer(srv, newServer(*policyToken))

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		srv.GracefulStop()
	}()
	fmt.Printf("listening on %s\n", lis.Addr().String())
	if err := srv.Serve(lis); err != nil {
		fmt.Fprintf(os.Stderr, "reference-ext-proc: %v\n", err)
		os.Exit(1)
	}
}
