// Package cgroup reads Linux control groups, v1 and v2: where their
// filesystems are mounted (Mounts, ParseMountinfo), which cgroup a process's
// CPU is accounted in (CPUPlace), and a cgroup's CPU accounting, limits,
// processes and freezer state (Group). It is the one place knee reads
// cgroups; fault writes them (creating cgroups, setting limits, freezing),
// use and hostinfo only read.
//
// Every path is taken as given, so tests run on hand-written trees: build a
// Hierarchy whose mounts are temporary directories, or call Mounts with a
// root holding proc/self/mountinfo.
package cgroup
