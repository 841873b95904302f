package use

// measured builds a reading with a value, as a probe does.
func measured(res Resource, metric string, kind Kind, v float64, unit string) Reading {
	return Reading{Resource: res, Metric: metric, Kind: kind, Value: v, Unit: unit}
}

// notMeasured builds a reading that could not be read, with why.
func notMeasured(res Resource, metric string, kind Kind, unit, why string) Reading {
	return Reading{Resource: res, Metric: metric, Kind: kind, Unit: unit, NotMeasured: why}
}
