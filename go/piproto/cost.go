package piproto

import (
	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/protobuf/proto"
)

// CostRates is what [CalculateCost] takes the rates from: a catalog *Model (its Cost) or a
// *ModelCost itself.
type CostRates interface {
	*aiv1.Model | *aiv1.ModelCost
}

// CalculateCost is what usage costs at a model's rates (dollars per million tokens), as pi's
// calculateCost computes it, to the bit. The rates are those of the tier with the largest
// InputTokensAbove that the prompt (input + cache read + cache write tokens) exceeds, else the
// base rates. Input, output and cache read are each the rate divided by 1,000,000, times the
// tokens. Cache writes with one-hour retention (CacheWrite_1H, a part of CacheWrite; absent is 0)
// cost twice the input rate and the rest the cache write rate: (cache write rate * rest + input
// rate * 2 * one-hour) / 1,000,000. The total is input + output + cache_read + cache_write, added
// in that order, and TotalFromProvider is false. All five amounts are set, 0 included. A model
// without rates (or a nil one) costs nothing. The usage's own Cost is ignored and left as it is;
// to record the result, set usage.Cost to it.
func CalculateCost[R CostRates](rates R, usage *aiv1.Usage) *aiv1.Cost {
	var base *aiv1.ModelCost
	switch rates := any(rates).(type) {
	case *aiv1.Model:
		base = rates.GetCost()
	case *aiv1.ModelCost:
		base = rates
	}
	// Token counts are doubles in pi, so the prompt is summed and compared as doubles too.
	input, output := float64(usage.GetInput()), float64(usage.GetOutput())
	cacheRead, cacheWrite := float64(usage.GetCacheRead()), float64(usage.GetCacheWrite())
	prompt := input + cacheRead + cacheWrite
	inputRate, outputRate := base.GetInput(), base.GetOutput()
	cacheReadRate, cacheWriteRate := base.GetCacheRead(), base.GetCacheWrite()
	threshold := -1.0
	for _, tier := range base.GetTiers() {
		above := float64(tier.GetInputTokensAbove())
		// Strictly above, and the first of equal thresholds wins, as in pi.
		if prompt > above && above > threshold {
			inputRate, outputRate = tier.GetInput(), tier.GetOutput()
			cacheReadRate, cacheWriteRate = tier.GetCacheRead(), tier.GetCacheWrite()
			threshold = above
		}
	}
	longWrite := float64(usage.GetCacheWrite_1H())
	shortWrite := cacheWrite - longWrite
	// Each product is converted explicitly, which rounds it: Go may otherwise fuse a multiply
	// and the addition after it into one instruction, and the sums would differ from pi's.
	costInput := float64(inputRate / 1_000_000 * input)
	costOutput := float64(outputRate / 1_000_000 * output)
	costCacheRead := float64(cacheReadRate / 1_000_000 * cacheRead)
	costCacheWrite := (float64(cacheWriteRate*shortWrite) + float64(inputRate*2*longWrite)) / 1_000_000
	// Every amount is set, zeros too: pi's Cost requires all five.
	cost := &aiv1.Cost{
		Input:             proto.Float64(costInput),
		Output:            proto.Float64(costOutput),
		CacheRead:         proto.Float64(costCacheRead),
		CacheWrite:        proto.Float64(costCacheWrite),
		Total:             proto.Float64(costInput + costOutput + costCacheRead + costCacheWrite),
		TotalFromProvider: proto.Bool(false),
	}
	return cost
}
