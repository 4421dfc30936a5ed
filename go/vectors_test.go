// The golden wire vectors of tests/vectors: every one decodes, re-encodes to identical bytes
// (unknown fields included) and prints the same ProtoJSON as the Python and TypeScript runtimes.

package piproto_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	piproto "github.com/pi-proto/pi-proto/go"
	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

var vectorsDir = filepath.Join(repoRoot, "tests", "vectors")

type manifest struct {
	Vectors []struct {
		Name  string   `json:"name"`
		Type  string   `json:"type"`
		Files []string `json:"files"`
	} `json:"vectors"`
}

func readManifest(t *testing.T) manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vectorsDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Vectors) == 0 {
		t.Fatal("the manifest lists no vectors")
	}
	return m
}

func parseJSON(t *testing.T, data []byte) any {
	t.Helper()
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	var value any
	if err := decoder.Decode(&value); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return normalizeNumbers(value)
}

// normalizeNumbers compares numbers by value: 1e2 and 100 are the same JSON number.
func normalizeNumbers(value any) any {
	switch value := value.(type) {
	case map[string]any:
		for key, item := range value {
			value[key] = normalizeNumbers(item)
		}
	case []any:
		for i, item := range value {
			value[i] = normalizeNumbers(item)
		}
	case json.Number:
		if n, err := value.Float64(); err == nil {
			return n
		}
	}
	return value
}

func TestTheManifestListsVectorsOfEveryMessageInPiAiV1(t *testing.T) {
	bound(t)
	covered := map[string]bool{}
	for _, vector := range readManifest(t).Vectors {
		covered[vector.Type] = true
	}
	var missing []string
	protoregistry.GlobalFiles.RangeFilesByPackage("pi.ai.v1", func(file protoreflect.FileDescriptor) bool {
		for i := range file.Messages().Len() {
			if name := string(file.Messages().Get(i).FullName()); !covered[name] {
				missing = append(missing, name)
			}
		}
		return true
	})
	if len(missing) > 0 {
		slices.Sort(missing)
		t.Fatalf("no vector for %v", missing)
	}
	if len(covered) < 20 {
		t.Fatalf("only %d message types covered", len(covered))
	}
	_ = aiv1.File_pi_ai_v1_service_proto // every file of the package is linked in
}

func TestVectors(t *testing.T) {
	bound(t)
	for _, vector := range readManifest(t).Vectors {
		t.Run(vector.Name, func(t *testing.T) {
			kind, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(vector.Type))
			if err != nil {
				t.Fatalf("%s is not generated: %v", vector.Type, err)
			}
			data, err := os.ReadFile(filepath.Join(vectorsDir, vector.Name+".binpb"))
			if err != nil {
				t.Fatal(err)
			}
			jsonText, err := os.ReadFile(filepath.Join(vectorsDir, vector.Name+".json"))
			if err != nil {
				t.Fatal(err)
			}

			message := kind.New().Interface()
			if err := proto.Unmarshal(data, message); err != nil {
				t.Fatal(err)
			}
			again, err := piproto.MarshalCanonical(message)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, data) {
				t.Fatalf("re-encoded bytes differ:\n got  %x\n want %x", again, data)
			}
			// proto.Marshal writes oneof members last; what it writes still decodes to the same bytes.
			written, err := proto.Marshal(message)
			if err != nil {
				t.Fatal(err)
			}
			if read := kind.New().Interface(); proto.Unmarshal(written, read) != nil || !bytes.Equal(canonical(t, read), data) {
				t.Fatalf("proto.Marshal wrote %x, which does not read back as the vector", written)
			}

			printed, err := protojson.Marshal(message)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := parseJSON(t, printed), parseJSON(t, jsonText); !reflect.DeepEqual(got, want) {
				t.Fatalf("ProtoJSON differs:\n got  %s\n want %s", printed, jsonText)
			}

			// ProtoJSON has no place for unknown fields: it parses back to the known ones.
			fromJSON := kind.New().Interface()
			if err := protojson.Unmarshal(jsonText, fromJSON); err != nil {
				t.Fatal(err)
			}
			known := kind.New().Interface()
			if err := (proto.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, known); err != nil {
				t.Fatal(err)
			}
			if got, want := canonical(t, fromJSON), canonical(t, known); !bytes.Equal(got, want) {
				t.Fatalf("ProtoJSON parses to %x, want %x", got, want)
			}
			if strings.Contains(vector.Name, "unknown_fields") && bytes.Equal(canonical(t, known), data) {
				t.Fatal("the vector carries no unknown fields")
			}
		})
	}
}

func canonical(t *testing.T, message proto.Message) []byte {
	t.Helper()
	data, err := piproto.MarshalCanonical(message)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
