// Command conformance runs the pi-proto conformance corpus against the Go runtime:
//
//	go run ./internal/conformance -corpus DIR -known-failures FILE [-server HOST:PORT]
//
// It reads every *.json Suite of the corpus, runs each case through the runtime's public API,
// compares structured outcomes only, and prints one line per case (PASS, FAIL, KNOWN, FIXED or
// SKIP), then "go: N passed, M failed, K known failures, S skipped". It exits 1 when a case fails
// or a known failure passes. Client cases run against -server, the reference server
// (`pi-proto serve --conformance DIR`).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	conformancev1 "github.com/pi-proto/pi-proto/go/gen/pi/conformance/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// caseBound is how long one case may run before it counts as failed.
const caseBound = 30 * time.Second

func main() {
	corpus := flag.String("corpus", "", "the folder of corpus files (*.json)")
	knownFailures := flag.String("known-failures", "", "this runtime's known failures (ProtoJSON)")
	server := flag.String("server", "", "the reference server's host:port, for the client cases")
	flag.Parse()
	if *corpus == "" {
		fmt.Fprintln(os.Stderr, "conformance: -corpus is required")
		os.Exit(2)
	}
	if err := run(*corpus, *knownFailures, *server); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(2)
	}
}

func run(corpus, knownFailuresPath, server string) error {
	cases, err := loadCases(corpus)
	if err != nil {
		return err
	}
	known := &conformancev1.KnownFailures{}
	if knownFailuresPath != "" {
		if err := readProtoJSON(knownFailuresPath, known); err != nil {
			return err
		}
	}
	expectedToFail := map[string]string{}
	for _, failure := range known.GetFailures() {
		expectedToFail[failure.GetCase()] = failure.GetReason()
	}
	unsupported := map[string]string{}
	for _, kind := range known.GetUnsupported() {
		unsupported[kind.GetKind()] = kind.GetReason()
	}
	passed, failed, knownCount, skipped := 0, 0, 0, 0
	for _, c := range cases {
		kind := kindOf(c)
		if reason, ok := unsupported[kind]; ok || (kind == "client" && server == "") {
			if !ok {
				reason = "no -server given"
			}
			skipped++
			fmt.Printf("SKIP %s: %s\n", c.GetName(), reason)
			continue
		}
		problem := outcome(c, server)
		_, listed := expectedToFail[c.GetName()]
		switch {
		case listed && problem == "":
			failed++
			fmt.Printf("FIXED %s: passes now; remove it from the known failures\n", c.GetName())
		case listed:
			knownCount++
			fmt.Printf("KNOWN %s: %s\n", c.GetName(), problem)
		case problem == "":
			passed++
			fmt.Printf("PASS %s\n", c.GetName())
		default:
			failed++
			fmt.Printf("FAIL %s: %s\n", c.GetName(), problem)
		}
	}
	fmt.Printf("go: %d passed, %d failed, %d known failures, %d skipped\n", passed, failed, knownCount, skipped)
	if failed > 0 {
		os.Exit(1)
	}
	return nil
}

// loadCases reads every suite of the corpus, file by file in name order; names must be unique.
func loadCases(corpus string) ([]*conformancev1.Case, error) {
	files, err := filepath.Glob(filepath.Join(corpus, "*.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%s: no corpus files (*.json) here", corpus)
	}
	var cases []*conformancev1.Case
	seen := map[string]string{}
	for _, file := range files { // Glob sorts them
		suite := &conformancev1.Suite{}
		if err := readProtoJSON(file, suite); err != nil {
			return nil, err
		}
		for _, c := range suite.GetCases() {
			if other, ok := seen[c.GetName()]; ok {
				return nil, fmt.Errorf("%s: case %q is also in %s", file, c.GetName(), other)
			}
			seen[c.GetName()] = file
			cases = append(cases, c)
		}
	}
	return cases, nil
}

// readProtoJSON parses a file strictly: an unknown field is an error, not something to skip.
func readProtoJSON(path string, message proto.Message) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := protojson.Unmarshal(data, message); err != nil {
		return fmt.Errorf("%s: not a %s in ProtoJSON: %w", path, message.ProtoReflect().Descriptor().FullName(), err)
	}
	return nil
}

// kindOf is the member name of Case.kind: "wire", "validate", "stream", "client", "pi_json",
// "cost" or "partial_json".
func kindOf(c *conformancev1.Case) string {
	field := c.ProtoReflect().WhichOneof(c.ProtoReflect().Descriptor().Oneofs().ByName("kind"))
	if field == nil {
		return ""
	}
	return string(field.Name())
}

// outcome runs one case and says how it differs from what the case expects; "" when it passes.
// A case that panics or runs longer than caseBound fails.
func outcome(c *conformancev1.Case, server string) string {
	done := make(chan string, 1)
	go func() {
		defer func() {
			if recovered := recover(); recovered != nil {
				done <- fmt.Sprintf("panicked: %v", recovered)
			}
		}()
		switch kind := c.GetKind().(type) {
		case *conformancev1.Case_Wire:
			done <- runWire(kind.Wire)
		case *conformancev1.Case_Validate:
			done <- runValidate(kind.Validate)
		case *conformancev1.Case_Stream:
			done <- runStream(kind.Stream)
		case *conformancev1.Case_Client:
			done <- runClient(kind.Client, c.GetName(), server)
		case *conformancev1.Case_Cost:
			done <- runCost(kind.Cost)
		case *conformancev1.Case_PartialJson:
			done <- runPartialJSON(kind.PartialJson)
		case *conformancev1.Case_PiJson:
			done <- "the Go runtime has no pi-JSON codec"
		default:
			done <- "the case sets no kind"
		}
	}()
	select {
	case problem := <-done:
		return problem
	case <-time.After(caseBound):
		return fmt.Sprintf("still running after %v", caseBound)
	}
}
