package cgroup

import "testing"

func TestFormatCPUs(t *testing.T) {
	tests := []struct{ quota, period, want string }{
		{"50000", "100000", "0.50"},
		{"250000", "100000", "2.50"},
		{"25000", "100000", "0.25"},
		{"max", "100000", "max"},
		{"-1", "100000", "max"},
		{"abc", "100000", "?"},
		{"50000", "0", "?"},
	}
	for _, tt := range tests {
		if got := FormatCPUs(tt.quota, tt.period); got != tt.want {
			t.Errorf("FormatCPUs(%q, %q) = %q, want %q", tt.quota, tt.period, got, tt.want)
		}
	}
}
