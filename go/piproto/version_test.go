package piproto_test

import (
	"os"
	"strings"
	"testing"

	"github.com/pi-proto/pi-proto/go/piproto"
)

func TestVersionIsTheRepositorys(t *testing.T) {
	bound(t)
	data, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(data)); piproto.Version != want {
		t.Fatalf("piproto.Version is %q, VERSION says %q", piproto.Version, want)
	}
}
