package probe

import "github.com/knee-dev/knee/use"

// measured builds a reading with a value.
func measured(res use.Resource, metric string, kind use.Kind, v float64, unit string) use.Reading {
	return use.Reading{Resource: res, Metric: metric, Kind: kind, Value: v, Unit: unit}
}

// notMeasured builds a reading that could not be read, with why.
func notMeasured(res use.Resource, metric string, kind use.Kind, unit, why string) use.Reading {
	return use.Reading{Resource: res, Metric: metric, Kind: kind, Unit: unit, NotMeasured: why}
}
