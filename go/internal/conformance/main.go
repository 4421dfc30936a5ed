// Command conformance is the Go runtime's conformance executor (`make conformance-executor`
// builds it as .bin/conformance-executor). It reads size-delimited pi.conformance.v1.CaseRequests
// from its standard input until it ends, runs each case through the public API of package
// piproto, and writes one size-delimited CaseResult per request to its standard output, in
// order. It compares nothing: tests/conformance/harness.py does. Diagnostics go to standard
// error only.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	conformancev1 "github.com/pi-proto/pi-proto/go/gen/pi/conformance/v1"
	"google.golang.org/protobuf/encoding/protodelim"
)

func main() {
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "conformance-executor:", err)
		os.Exit(1)
	}
}

// serve answers every request of in on out, flushing after each result.
func serve(in io.Reader, out io.Writer) error {
	reader, writer := bufio.NewReader(in), bufio.NewWriter(out)
	// The harness is trusted and wire cases can be large: no size bound on a request.
	options := protodelim.UnmarshalOptions{MaxSize: -1}
	for {
		request := &conformancev1.CaseRequest{}
		if err := options.UnmarshalFrom(reader, request); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading a request: %w", err)
		}
		result := execute(request)
		result.Name = request.GetCase().GetName()
		if _, err := protodelim.MarshalTo(writer, result); err != nil {
			return fmt.Errorf("writing the result of %q: %w", result.Name, err)
		}
		if err := writer.Flush(); err != nil {
			return fmt.Errorf("writing the result of %q: %w", result.Name, err)
		}
	}
}

// execute runs one case; whatever the runtime raises, a panic included, is the result's error.
func execute(request *conformancev1.CaseRequest) (result *conformancev1.CaseResult) {
	defer func() {
		if recovered := recover(); recovered != nil {
			result = failed(fmt.Errorf("panicked: %v", recovered))
		}
	}()
	c := request.GetCase()
	switch kind := c.GetKind().(type) {
	case *conformancev1.Case_Wire:
		return wire(kind.Wire)
	case *conformancev1.Case_Validate:
		return validate(kind.Validate)
	case *conformancev1.Case_Stream:
		return stream(kind.Stream)
	case *conformancev1.Case_Client:
		return client(kind.Client, c.GetName(), request.GetServer(), request.GetProtocol())
	case *conformancev1.Case_Cost:
		return cost(kind.Cost)
	case *conformancev1.Case_PartialJson:
		return partialJSON(kind.PartialJson)
	case *conformancev1.Case_PiJson:
		return piJSON(kind.PiJson)
	}
	return failed(errors.New("the case sets no kind"))
}

func failed(err error) *conformancev1.CaseResult {
	return &conformancev1.CaseResult{Result: &conformancev1.CaseResult_Error{Error: err.Error()}}
}
