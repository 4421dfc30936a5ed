package piproto_test

import (
	"math"
	"testing"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"github.com/pi-proto/pi-proto/go/piproto"
	"google.golang.org/protobuf/proto"
)

func TestCalculateCostIsPisToTheBit(t *testing.T) {
	bound(t)
	// A line of a real pi session, with the cost pi wrote for it.
	rates := &aiv1.ModelCost{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25}
	usage := &aiv1.Usage{Input: 1, Output: 114, CacheWrite: 33637, Cost: &aiv1.Cost{Total: 1}}
	want := &aiv1.Cost{Input: 5e-06, Output: 0.00285, CacheWrite: 0.21023125, Total: 0.21308625}
	got := piproto.CalculateCost(rates, usage)
	assertProtoEqual(t, got, want)
	// From a model of the catalog, the same; the usage's own cost is left as it was.
	assertProtoEqual(t, piproto.CalculateCost(&aiv1.Model{Id: "opus", Provider: "anthropic", Cost: rates}, usage), want)
	if usage.Cost.Total != 1 {
		t.Fatal("CalculateCost changed the usage")
	}
}

func TestCalculateCostDividesFirstAndAddsInPisOrder(t *testing.T) {
	bound(t)
	rates := &aiv1.ModelCost{Input: 2.5, Output: 15, CacheRead: 0.25, CacheWrite: 4.5}
	got := piproto.CalculateCost(rates, &aiv1.Usage{Input: 1048576, Output: 65536, CacheRead: 900000, CacheWrite: 148576})
	// 0.25 * 900000 / 1e6 is 0.225; dividing first gives the double below it, as pi does.
	if got.CacheRead != 0.22499999999999998 || math.Float64bits(got.Total) != math.Float64bits(4.4980720000000005) {
		t.Fatalf("cost %v", got)
	}
}

func TestAModelWithoutRatesCostsNothing(t *testing.T) {
	bound(t)
	usage := &aiv1.Usage{Input: 1000, Output: 1000}
	for _, got := range []*aiv1.Cost{
		piproto.CalculateCost(&aiv1.Model{Id: "free", Provider: "local"}, usage),
		piproto.CalculateCost((*aiv1.ModelCost)(nil), usage),
	} {
		if !proto.Equal(got, &aiv1.Cost{}) {
			t.Fatalf("cost %v", got)
		}
	}
}
