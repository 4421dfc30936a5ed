package piproto

import aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"

// CostRates is what [CalculateCost] takes the rates from: a catalog *Model (its Cost) or a
// *ModelCost itself.
type CostRates interface {
	*aiv1.Model | *aiv1.ModelCost
}

// CalculateCost is what usage costs at a model's rates (dollars per million tokens), as pi's
// calculateCost computes it, to the bit: each part is the rate divided by 1,000,000, times the
// token count, and the total is input + output + cache_read + cache_write, added in that order.
// A model without rates (or a nil one) costs nothing. The usage's own Cost is ignored and left
// as it is; to record the result, set usage.Cost to it.
func CalculateCost[R CostRates](rates R, usage *aiv1.Usage) *aiv1.Cost {
	var perMillion *aiv1.ModelCost
	switch rates := any(rates).(type) {
	case *aiv1.Model:
		perMillion = rates.GetCost()
	case *aiv1.ModelCost:
		perMillion = rates
	}
	// Each product is converted explicitly, which rounds it: Go may otherwise fuse a multiply
	// and the addition after it into one instruction, and the total would differ from pi's.
	cost := &aiv1.Cost{
		Input:      float64(perMillion.GetInput() / 1_000_000 * float64(usage.GetInput())),
		Output:     float64(perMillion.GetOutput() / 1_000_000 * float64(usage.GetOutput())),
		CacheRead:  float64(perMillion.GetCacheRead() / 1_000_000 * float64(usage.GetCacheRead())),
		CacheWrite: float64(perMillion.GetCacheWrite() / 1_000_000 * float64(usage.GetCacheWrite())),
	}
	cost.Total = cost.Input + cost.Output + cost.CacheRead + cost.CacheWrite
	return cost
}
