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
	usage := &aiv1.Usage{Input: proto.Int64(1), Output: proto.Int64(114), CacheWrite: proto.Int64(33637), Cost: &aiv1.Cost{Total: proto.Float64(1)}}
	want := costOf(5e-06, 0.00285, 0, 0.21023125, 0.21308625)
	got := piproto.CalculateCost(rates, usage)
	assertProtoEqual(t, got, want)
	// From a model of the catalog, the same; the usage's own cost is left as it was.
	assertProtoEqual(t, piproto.CalculateCost(&aiv1.Model{Id: "opus", Provider: "anthropic", Cost: rates}, usage), want)
	if usage.Cost.GetTotal() != 1 {
		t.Fatal("CalculateCost changed the usage")
	}
}

func TestCalculateCostDividesFirstAndAddsInPisOrder(t *testing.T) {
	bound(t)
	rates := &aiv1.ModelCost{Input: 2.5, Output: 15, CacheRead: 0.25, CacheWrite: 4.5}
	got := piproto.CalculateCost(rates, &aiv1.Usage{Input: proto.Int64(1048576), Output: proto.Int64(65536), CacheRead: proto.Int64(900000), CacheWrite: proto.Int64(148576)})
	// 0.25 * 900000 / 1e6 is 0.225; dividing first gives the double below it, as pi does.
	if got.GetCacheRead() != 0.22499999999999998 || math.Float64bits(got.GetTotal()) != math.Float64bits(4.4980720000000005) {
		t.Fatalf("cost %v", got)
	}
}

func TestAModelWithoutRatesCostsNothing(t *testing.T) {
	bound(t)
	usage := &aiv1.Usage{Input: proto.Int64(1000), Output: proto.Int64(1000)}
	for _, got := range []*aiv1.Cost{
		piproto.CalculateCost(&aiv1.Model{Id: "free", Provider: "local"}, usage),
		piproto.CalculateCost((*aiv1.ModelCost)(nil), usage),
	} {
		// Every amount is present, 0: pi's Cost requires them all.
		if !proto.Equal(got, costOf(0, 0, 0, 0, 0)) {
			t.Fatalf("cost %v", got)
		}
	}
}

func TestCalculateCostTakesTheLargestTierThePromptExceeds(t *testing.T) {
	bound(t)
	long := &aiv1.ModelCostTier{Input: 6, Output: 22.5, CacheRead: 0.6, CacheWrite: 7.5, InputTokensAbove: 200000}
	mid := &aiv1.ModelCostTier{Input: 4, Output: 18, CacheRead: 0.4, CacheWrite: 5, InputTokensAbove: 128000}
	rates := &aiv1.ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75, Tiers: []*aiv1.ModelCostTier{long}}
	// The prompt is input + cache read + cache write: exactly the threshold takes the base rates.
	at := &aiv1.Usage{Input: proto.Int64(150000), Output: proto.Int64(1000), CacheRead: proto.Int64(40000), CacheWrite: proto.Int64(10000)}
	if got := piproto.CalculateCost(rates, at); got.GetInput() != 0.45 || got.GetOutput() != 0.015000000000000001 {
		t.Fatalf("at the threshold %v", got)
	}
	above := &aiv1.Usage{Input: proto.Int64(150001), Output: proto.Int64(1000), CacheRead: proto.Int64(40000), CacheWrite: proto.Int64(10000)}
	want := costOf(0.900006, 0.022500000000000003, 0.024, 0.075, 1.021506)
	assertProtoEqual(t, piproto.CalculateCost(rates, above), want)
	// Tiers out of order: above both the larger one's rates, between them the smaller one's.
	rates.Tiers = []*aiv1.ModelCostTier{long, mid}
	if got := piproto.CalculateCost(rates, &aiv1.Usage{Input: proto.Int64(300000)}); got.GetInput() != 1.8 {
		t.Fatalf("above both %v", got)
	}
	if got := piproto.CalculateCost(rates, &aiv1.Usage{Input: proto.Int64(150000)}); got.GetInput() != 0.6 {
		t.Fatalf("between %v", got)
	}
}

func TestCalculateCostChargesOneHourWritesTwiceTheChosenInputRate(t *testing.T) {
	bound(t)
	opus := &aiv1.ModelCost{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25}
	split := &aiv1.Usage{Input: proto.Int64(1), Output: proto.Int64(114), CacheWrite: proto.Int64(33637), CacheWrite_1H: proto.Int64(20000)}
	if got := piproto.CalculateCost(opus, split); got.GetCacheWrite() != 0.28523125 || got.GetTotal() != 0.28808625 {
		t.Fatalf("split %v", got)
	}
	// Absent and 0 cost the same: every write at the cache write rate.
	absent := piproto.CalculateCost(opus, &aiv1.Usage{Input: proto.Int64(1), Output: proto.Int64(114), CacheWrite: proto.Int64(33637)})
	zero := piproto.CalculateCost(opus, &aiv1.Usage{Input: proto.Int64(1), Output: proto.Int64(114), CacheWrite: proto.Int64(33637), CacheWrite_1H: proto.Int64(0)})
	if absent.GetCacheWrite() != 0.21023125 || !proto.Equal(absent, zero) {
		t.Fatalf("absent %v, zero %v", absent, zero)
	}
	// Above a threshold, twice the tier's input rate: (7.5 * 6000 + 6 * 2 * 4000) / 1e6.
	tiered := &aiv1.ModelCost{Input: 3, Output: 15, Tiers: []*aiv1.ModelCostTier{{Input: 6, CacheWrite: 7.5, InputTokensAbove: 200000}}}
	usage := &aiv1.Usage{Input: proto.Int64(150001), CacheRead: proto.Int64(40000), CacheWrite: proto.Int64(10000), CacheWrite_1H: proto.Int64(4000)}
	if got := piproto.CalculateCost(tiered, usage); got.GetCacheWrite() != 0.093 {
		t.Fatalf("tiered %v", got)
	}
	// Both products are added before the division: dividing each first gives ...98e-06.
	order := piproto.CalculateCost(
		&aiv1.ModelCost{Input: 0.1, Output: 0.2, CacheRead: 0.3, CacheWrite: 0.7},
		&aiv1.Usage{Input: proto.Int64(3), Output: proto.Int64(1), CacheRead: proto.Int64(11), CacheWrite: proto.Int64(5), CacheWrite_1H: proto.Int64(2)},
	)
	if math.Float64bits(order.GetCacheWrite()) != math.Float64bits(2.4999999999999994e-06) ||
		math.Float64bits(order.GetTotal()) != math.Float64bits(6.299999999999999e-06) {
		t.Fatalf("order %v", order)
	}
}

// costOf is the Cost CalculateCost returns: every amount set, and TotalFromProvider false.
func costOf(input, output, cacheRead, cacheWrite, total float64) *aiv1.Cost {
	return &aiv1.Cost{
		Input: proto.Float64(input), Output: proto.Float64(output), CacheRead: proto.Float64(cacheRead),
		CacheWrite: proto.Float64(cacheWrite), Total: proto.Float64(total), TotalFromProvider: proto.Bool(false),
	}
}
