// Package version says which knee this is.
package version

import "runtime/debug"

// Version is knee's release version.
const Version = "0.1.0"

// String is Version plus the VCS revision the binary was built from, when known.
func String() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Version
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return Version + "+" + s.Value[:12]
		}
	}
	return Version
}
